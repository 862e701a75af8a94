/**
 * One attempt for one received message, after the 250 (poster.ts runs them): verify it once
 * (mailauth: SPF, DKIM, DMARC, ARC; the verdicts are kept, so every retry posts the same), build
 * its JSON (payload.ts), POST it to its route's URL signed with the route's key in the webhooks'
 * `t=…,v1=…` scheme (webhooks/request.ts: the same target checks and pinned addresses), and
 * decide how the attempt ends: posted on a 2xx, retried with the webhooks' backoff until
 * inbound.postMaxAgeMs after the message was received, failed after that or when its route is
 * gone. Pure policy over the store verbs it is given; never throws for what the message holds.
 */
import type { InboundAttemptEnd, InboundMessage, InboundPostAttempt } from '../domain/inbound-message.js';
import type { InboundRoute } from '../domain/inbound-route.js';
import { retryDelayMs } from '../domain/webhook.js';
import type { StorePort } from '../store/port/index.js';
import type { InboundClaim } from '../store/port/inbound-messages.js';
import type { PostResult } from '../webhooks/http-post.js';
import { sendSigned, type SendOptions } from '../webhooks/request.js';
import type { AuthDns } from './auth-resolver.js';
import { inboundPayload } from './payload.js';
import { verifyMessage, type AuthVerdicts } from './verify.js';

export interface PostAttemptDeps {
  store: Pick<StorePort, 'inboundMessages' | 'inboundRoutes'>;
  resolver: AuthDns;
  /** How the POST is sent (targets, post function, timeout, agents), as the webhook dispatcher sends. */
  send: Omit<SendOptions, 'nowMs' | 'signal'>;
  retryBaseMs: number;
  postMaxAgeMs: number;
  attachmentInlineMax: number;
  /** The link an attachment too large to inline gets in its place. */
  attachmentUrl: (messageId: string, index: number) => string;
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
  const auth = (m.auth as AuthVerdicts | null) ?? (await verifyOnce(c, d, raw));
  if (auth === 'stale') return 'stale';
  const result = await post(m, route, secret, { raw, auth }, d, signal);
  if (signal?.aborted) return 'stale';
  return finish(c, d, result, false);
}

async function verifyOnce(c: InboundClaim, d: PostAttemptDeps, raw: Buffer): Promise<AuthVerdicts | 'stale'> {
  const m = c.message;
  const auth = await verifyMessage({ raw, clientAddress: m.clientAddress, helo: m.helo, mailFrom: m.envelope.mailFrom, resolver: d.resolver, now: d.wall });
  const kept = await d.store.inboundMessages.markProcessed(m.id, c.lease, auth as unknown as Record<string, unknown>);
  return kept === 'stale' ? 'stale' : auth;
}

async function post(m: InboundMessage, route: InboundRoute, secret: string, x: { raw: Buffer; auth: AuthVerdicts }, d: PostAttemptDeps, signal?: AbortSignal): Promise<PostResult> {
  const payload = await inboundPayload({
    id: m.id,
    routeId: m.routeId,
    receivedAt: new Date(m.receivedAt),
    envelope: m.envelope,
    raw: x.raw,
    auth: x.auth,
    mailboxHash: m.mailboxHash,
    attachmentInlineMax: d.attachmentInlineMax,
    attachmentUrl: (index) => d.attachmentUrl(m.id, index),
  });
  // The delivery id is the message's: a receiver that got a POST whose answer was lost sees the retry as the same message.
  return sendSigned({ webhook: route, secret, payload, deliveryId: m.id, attempt: m.attempts.length + 1 }, { ...d.send, nowMs: d.wall(), signal });
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
