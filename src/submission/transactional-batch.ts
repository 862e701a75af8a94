/**
 * POST /send/transactional/batch (api-surface.md, sending.transactionalBatch): up to 500
 * SendMessageRequests, answered in request order, each accepted or failed on its own. Every
 * entry is prepared (validated, rendered, signed) in parallel in the worker pool; then all
 * accepted messages and the idempotency record are committed in ONE store write, so the 200
 * costs one fsync however many entries there are, and a crash keeps all of them or none.
 *
 * What fails the whole request instead of one entry: what concerns the request, not an entry
 * (credential, channel header, idempotency key, a suspended account), and a pending account's
 * free quota when the accepted entries together exceed it (the quota is checked in the commit).
 */
import { FieldErrorList, isAppError, type AppError, type ErrorCode, type FieldErrors } from '../domain/errors.js';
import type { Channel } from '../domain/types.js';
import { sendChannel } from './channel.js';
import type { SenderHeaders } from './sender-headers.js';
import { enqueue } from './enqueue.js';
import { idempotencyContext } from './idempotency.js';
import { sendingAccount } from './policy.js';
import { addSenderFieldErrorOf } from './sender.js';
import { TemplateLookup } from './stored-template.js';
import type { SubmissionDeps } from './deps.js';
import { prepareMessage, sendLimitOf, type PreparedMessage, type TransactionalBody, type TransactionalResponse } from './transactional.js';

export const MAX_BATCH_REQUESTS = 500;

/** One entry as the adapter parsed it: a valid body, or the raw value with its schema errors. */
export type BatchEntryInput = { valid: true; body: TransactionalBody } | { valid: false; body: unknown; errors: FieldErrors };

/** The body with the sender's principal and headers (sender-headers.ts). */
export interface BatchRequest extends SenderHeaders {
  requests: BatchEntryInput[];
}

export interface FailedResponse {
  status: 'failed';
  errorCode: ErrorCode;
  errorMessage: string;
}

export interface BatchResponse {
  responses: Array<TransactionalResponse | FailedResponse>;
}

export async function sendTransactionalBatch(deps: SubmissionDeps, req: BatchRequest): Promise<BatchResponse> {
  const channel = await sendChannel(deps.store, req);
  const idem = idempotencyContext({
    accountId: req.principal.accountId,
    key: req.idempotencyKey,
    header: req.idempotencyHeader,
    route: 'send/transactional/batch',
    channelId: channel.id,
    body: req.requests.map((r) => r.body),
  });
  const { body } = await deps.idempotency.run(idem, async () => {
    const account = await sendingAccount(deps.store, req.principal.accountId);
    // One lookup per distinct stored template the entries name, shared by the whole batch.
    const templates = new TemplateLookup(deps.store, req.principal);
    const outcomes = await Promise.all(
      req.requests.map(async (entry, i): Promise<PreparedMessage | FailedResponse> => {
        const base = `/requests/${i}`;
        if (!entry.valid) return failed('validation_failed', 'The request has invalid fields', base, await entryErrors(deps, { accountId: account.id, channel }, entry));
        try {
          return await prepareMessage(deps, { channel, account, mailType: 'transactional', templates }, entry.body);
        } catch (err) {
          // Catalogue errors are this entry's answer; anything else is a fault of ours and
          // fails the whole batch (500, nothing committed, so a retry is safe).
          if (!isAppError(err)) throw err;
          return failedFrom(err, base);
        }
      }),
    );
    const response: BatchResponse = { responses: outcomes.map((o) => ('message' in o ? o.response : o)) };
    await enqueue(deps, {
      messages: outcomes.flatMap((o) => ('message' in o ? [o.message] : [])),
      sendLimit: sendLimitOf(deps, account),
      idempotency: idem ? { accountId: idem.accountId, key: idem.key, record: deps.idempotency.recordFor(idem, response) } : undefined,
    });
    return response;
  });
  return body;
}

/**
 * An entry that failed its schema: its schema errors and the sender domain's beside them, as the
 * single send route answers them in one 422 (sender.ts addSenderFieldError).
 */
async function entryErrors(deps: SubmissionDeps, ctx: { accountId: string; channel: Channel }, entry: { body: unknown; errors: FieldErrors }): Promise<FieldErrors> {
  const errors = new FieldErrorList();
  for (const [pointer, list] of Object.entries(entry.errors)) for (const e of list) errors.add(pointer, e.code, e.message);
  await addSenderFieldErrorOf(deps, { ...ctx, from: (entry.body as { from?: unknown } | null)?.from }, errors);
  return errors.toJSON();
}

function failedFrom(err: AppError, base: string): FailedResponse {
  return failed(err.code, err.message, base, err.errors);
}

/**
 * A failed entry: the error's detail, then each field pointer within the whole batch body
 * (`/requests/3/to/0/email`) with its messages, since the answer has no `errors` object.
 */
function failed(errorCode: ErrorCode, detail: string, base: string, errors: FieldErrors | undefined): FailedResponse {
  const fields = Object.entries(errors ?? {}).map(([pointer, list]) => `${base}${pointer === '/' ? '' : pointer} (${list.map((e) => e.message).join('; ')})`);
  return { status: 'failed', errorCode, errorMessage: fields.length > 0 ? `${detail}: ${fields.join(', ')}` : detail };
}
