/**
 * One attempt for one received message, after the 250 (poster.ts runs them): verify it once
 * (mailauth: SPF, DKIM, DMARC, ARC; the verdicts are kept, so every retry posts the same), build
 * its JSON (payload.ts) in the worker pool, POST it to its route's URL signed with the route's
 * key in the webhooks' `t=…,v1=…` scheme (webhooks/request.ts: the same target checks and
 * pinned addresses), and
 * decide how the attempt ends: posted on a 2xx, retried with the webhooks' backoff until
 * inbound.postMaxAgeMs after the message was received, failed after that or when its route is
 * gone. Pure policy over the store verbs it is given; never throws for what the message holds.
 *
 * The main thread (HTTP API, SMTP listeners, delivery scheduler) only waits: verification feeds
 * mailauth one chunk per turn (verify.ts), the JSON of any but a small message is built and
 * serialized on a worker thread (workers/inbound-tasks.ts, the pool's inbound lane), and the
 * bytes it answers are signed a chunk per turn (webhooks/signature.ts) and sent as they are. The longest event-loop delay on
 * the main thread while one message is processed (test/integration/inbound-event-loop.test.ts,
 * 2 cores), with everything on the main thread before, and now:
 *   25 MB attachment, inlined (34 MB of JSON):  577 ms before, 21-45 ms now (either engine)
 *   10,000 one-line parts (500 read, the cap):   39 ms before, 10-14 ms now
 * Of the 25 MB case's, before: the parse up to 440 ms at once, verification 75-210 ms,
 * JSON.stringify 125 ms, the HMAC 150 ms, encoding the string to send it 130 ms; later found in
 * a CPU profile of the test: the first message loading mailauth (130 ms; the poster's start loads
 * it now) and LMDB's copy of the 34 MB into new memory (100-160 ms of page faults; now touched a
 * MiB per turn, store/lmdb/bytes-in-turns.ts). What is left is the signature's HMAC, a chunk per
 * turn, and the garbage collector.
 */
import type { InboundAttemptEnd, InboundMessage, InboundPostAttempt } from '../domain/inbound-message.js';
import type { InboundRoute } from '../domain/inbound-route.js';
import { fewMimeParts } from '../domain/mime-parts.js';
import { retryDelayMs } from '../domain/webhook.js';
import type { StorePort } from '../store/port/index.js';
import type { InboundClaim } from '../store/port/inbound-messages.js';
import type { PostResult } from '../webhooks/http-post.js';
import { sendSigned, type SendOptions } from '../webhooks/request.js';
import { inboundPayloadBody, type InboundPayloadTaskInput } from '../workers/inbound-tasks.js';
import type { WorkerPool } from '../workers/pool.js';
import type { AuthDns } from './auth-resolver.js';
import { verifyMessage, type AuthVerdicts } from './verify.js';

export interface PostAttemptDeps {
  store: Pick<StorePort, 'inboundMessages' | 'inboundRoutes'>;
  resolver: AuthDns;
  /** How the POST is sent (targets, post function, timeout, agents), as the webhook dispatcher sends. */
  send: Omit<SendOptions, 'nowMs' | 'signal'>;
  retryBaseMs: number;
  postMaxAgeMs: number;
  attachmentInlineMax: number;
  /** The link an attachment too large to inline gets in its place is this followed by its index. */
  attachmentUrlPrefix: (messageId: string) => string;
  /** Where the JSON is built, unless `buildHere` holds for the message: the worker pool. */
  pool: Pick<WorkerPool, 'inboundPayload'>;
  /**
   * Whether the poster has so little in flight that a small message (up to MAIN_THREAD_MAX_BYTES)
   * is built on this thread rather than by waking a worker for it.
   */
  buildHere: boolean;
  /** Scheduler time (queue/clock.ts now()): what is stored and compared with stored times. */
  now: () => number;
  /** The wall clock, for the signature's timestamp the receiver compares with its own. */
  wall: () => number;
}

/** What an attempt did: its record, or nothing when the claim went stale (another claimer has the message). */
export type AttemptResult = { attempt: InboundPostAttempt; end: InboundAttemptEnd } | 'stale';

export async function runAttempt(c: InboundClaim, d: PostAttemptDeps, signal?: AbortSignal): Promise<AttemptResult> {
  const m = c.message;
  const route = await d.store.inboundRoutes.get(m.routeId);
  const secret = route ? await d.store.inboundRoutes.signingKey(route.id) : null;
  // A route deleted while its messages waited: nothing to post to, ever (the message stays readable).
  if (!route || secret === null) return finish(c, d, { statusCode: null, error: 'route deleted' }, true);
  // Read once for verification and the payload: up to inbound.maxMessageSize.
  const raw = await d.store.inboundMessages.raw(m.id);
  if (!raw) return finish(c, d, { statusCode: null, error: 'raw message gone' }, true);
  const auth = m.auth ?? (await verifyOnce(c, d, raw));
  if (auth === 'stale') return 'stale';
  const result = await post(m, route, secret, { raw, auth }, d, signal);
  if (signal?.aborted) return 'stale';
  return finish(c, d, result, false);
}

async function verifyOnce(c: InboundClaim, d: PostAttemptDeps, raw: Buffer): Promise<AuthVerdicts | 'stale'> {
  const m = c.message;
  const auth = await verifyMessage({ raw, clientAddress: m.clientAddress, helo: m.helo, mailFrom: m.envelope.mailFrom, resolver: d.resolver, now: d.wall });
  const kept = await d.store.inboundMessages.markProcessed(m.id, c.lease, auth);
  return kept === 'stale' ? 'stale' : auth;
}

/**
 * Messages up to this size are built here while the poster has little in flight: an 8 KB reply
 * takes about 0.4 ms to parse and serialize, while handing it to a worker (waking the thread,
 * moving the bytes both ways) cost 1.1-1.6 ms of CPU per message more in the inbound benchmark's
 * trickle of one message at a time (bench/RESULTS.md). Under a burst the workers stay awake and
 * build in parallel with this thread (everything here cut the rate posted from 622 to 449 msg/s
 * over kept connections), and a message with attachments is past the size: both go to the pool,
 * and so does a small one of many parts (domain/mime-parts.ts).
 */
const MAIN_THREAD_MAX_BYTES = 64 * 1024;

async function post(m: InboundMessage, route: InboundRoute, secret: string, x: { raw: Buffer; auth: AuthVerdicts }, d: PostAttemptDeps, signal?: AbortSignal): Promise<PostResult> {
  let body: Uint8Array;
  const build = d.buildHere && x.raw.length <= MAIN_THREAD_MAX_BYTES && fewMimeParts(x.raw) ? inboundPayloadBody : (input: InboundPayloadTaskInput) => d.pool.inboundPayload(input);
  try {
    // `raw` is handed to the worker thread: it is not read here again.
    ({ body } = await build({
      id: m.id,
      routeId: m.routeId,
      receivedAt: m.receivedAt,
      envelope: m.envelope,
      raw: x.raw,
      auth: x.auth,
      mailboxHash: m.mailboxHash,
      attachmentInlineMax: d.attachmentInlineMax,
      attachmentUrlPrefix: d.attachmentUrlPrefix(m.id),
    }));
  } catch (err) {
    // Not the message's content (that always gives a payload) but the thread: a worker that
    // died, or ran out of memory. Retried with the backoff like a POST that failed.
    return { statusCode: null, error: `the JSON could not be built: ${err instanceof Error ? err.message : String(err)}` };
  }
  // The delivery id is the message's: a receiver that got a POST whose answer was lost sees the retry as the same message.
  return sendSigned({ webhook: route, secret, body, deliveryId: m.id, attempt: m.attempts.length + 1 }, { ...d.send, nowMs: d.wall(), signal });
}

/** Records the attempt with its end: posted on success, else a retry within postMaxAgeMs of receipt, else failed. */
async function finish(c: InboundClaim, d: PostAttemptDeps, r: PostResult, giveUp: boolean): Promise<AttemptResult> {
  const now = d.now();
  const attempt: InboundPostAttempt = { at: new Date(now).toISOString(), statusCode: r.statusCode, error: r.error };
  const end = attemptEnd(c.message, r, { now, giveUp, retryBaseMs: d.retryBaseMs, postMaxAgeMs: d.postMaxAgeMs });
  const outcome = await d.store.inboundMessages.recordAttempt({ id: c.message.id, lease: c.lease, attempt, end });
  return outcome === 'stale' ? 'stale' : { attempt, end };
}

export function attemptEnd(m: InboundMessage, r: PostResult, o: { now: number; giveUp: boolean; retryBaseMs: number; postMaxAgeMs: number }): InboundAttemptEnd {
  if (r.error === null) return { kind: 'posted' };
  const deadline = Date.parse(m.receivedAt) + o.postMaxAgeMs;
  if (o.giveUp || o.now >= deadline) return { kind: 'failed' };
  return { kind: 'retry', atMs: Math.min(o.now + retryDelayMs(m.attempts.length + 1, o.retryBaseMs), deadline) };
}
