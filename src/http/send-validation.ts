/**
 * A send body that fails its schema is reported with every error at once: the schema's, and the
 * address checks that otherwise run only after the schema passed (issue 18: a bad address and
 * six tags answered only `/tags`). Send routes validate with attachValidation and call this first.
 */
import type { FastifyRequest } from 'fastify';
import { normalizeEmail } from '../domain/address.js';
import { isAppError, type FieldErrorList } from '../domain/errors.js';
import { schemaErrors } from './query-params.js';
import { channelHeader, idempotencyKey } from './request-headers.js';

const ADDRESS_FIELDS = ['from', 'to', 'cc', 'bcc', 'replyTo'] as const;
/** The address fields of a broadcast entry (`/messages/N`). */
const ENTRY_ADDRESS_FIELDS = ['to', 'cc', 'bcc'] as const;

function isObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

/**
 * Address errors of whatever address-shaped entries the body has, where the schema found none:
 * those of a send body, and of each broadcast entry in `messages` when `entries` is set.
 */
export function addAddressErrors(body: unknown, errors: FieldErrorList, opts: { entries?: boolean } = {}): void {
  addFieldAddressErrors(body, ADDRESS_FIELDS, '', errors);
  if (opts.entries && isObject(body) && Array.isArray(body.messages)) {
    body.messages.forEach((m, i) => addFieldAddressErrors(m, ENTRY_ADDRESS_FIELDS, `/messages/${i}`, errors));
  }
}

function addFieldAddressErrors(body: unknown, fields: readonly string[], base: string, errors: FieldErrorList): void {
  if (!isObject(body)) return;
  const known = errors.toJSON();
  for (const field of fields) {
    const v = body[field];
    const entries: Array<[unknown, string]> = Array.isArray(v) ? v.map((a, i) => [a, `${base}/${field}/${i}`]) : [[v, `${base}/${field}`]];
    for (const [a, pointer] of entries) {
      if (!isObject(a) || typeof a.email !== 'string' || known[`${pointer}/email`]) continue;
      const r = normalizeEmail(a.email);
      if ('problem' in r) errors.add(`${pointer}/email`, r.problem.code, r.problem.message);
    }
  }
}

/** The field errors of the channel and idempotency headers (bad format, aliases that disagree). */
function addHeaderErrors(req: FastifyRequest, errors: FieldErrorList): void {
  for (const read of [channelHeader, idempotencyKey]) {
    try {
      read(req);
    } catch (err) {
      if (!isAppError(err) || !err.errors) throw err;
      for (const [pointer, list] of Object.entries(err.errors)) for (const e of list) errors.add(pointer, e.code, e.message);
    }
  }
}

/**
 * Throws validation_failed with every error (headers, schema, addresses, and the sender domain's
 * through `addSenderErrors`) when the body failed its schema; `entries` for a broadcast body.
 * `addSenderErrors` reads the store (the channel, the domain) and is awaited before the throw,
 * so its error joins the list last, as when it was synchronous.
 */
export async function throwSendSchemaErrors(
  req: FastifyRequest,
  addSenderErrors?: (from: unknown, channelHeader: string | undefined, errors: FieldErrorList) => Promise<void>,
  opts: { entries?: boolean } = {},
): Promise<void> {
  if (!req.validationError) return;
  const errors = schemaErrors(req);
  addAddressErrors(req.body, errors, opts);
  addHeaderErrors(req, errors);
  if (addSenderErrors && isObject(req.body)) {
    let header: string | undefined;
    try {
      header = channelHeader(req);
    } catch {
      header = undefined; // reported by addHeaderErrors
    }
    await addSenderErrors(req.body.from, header, errors);
  }
  errors.throwIfAny('The request body has invalid fields');
}
