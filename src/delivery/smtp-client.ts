/**
 * One delivery attempt over SMTP (RFC 5321): try the targets (MX addresses, best first) until
 * one gives us a session, then run one mail transaction for all recipients of the job and
 * return an outcome value. Nothing here touches the store.
 *
 * Session rules:
 *  - A kept connection to the target's destination (connection-cache.ts) is used first, after a
 *    successful RSET (RFC 5321 4.1.1.5), pipelined with the transaction's MAIL FROM when the
 *    server offers PIPELINING (RFC 2920). One that the server closed meanwhile or that fails RSET
 *    is dropped and the next kept one, or a new connection, is tried: that never counts as a
 *    failure of the attempt.
 *  - A target that cannot be connected to, greets with an error (RFC 5321 3.1, 4.2: 421/554),
 *    or fails EHLO is skipped for the next one (5.1: "try the next MX"); at most MAX_TARGETS
 *    per attempt (like Postfix's smtp_mx_address_limit).
 *  - TLS (tls-policy.ts): under opportunistic TLS, a target that refuses STARTTLS (454) or fails
 *    the handshake gets the message in plain text over a new connection without STARTTLS, the
 *    reason recorded (RFC 7435: plain text beats no delivery; Postfix does the same). Kept
 *    connections go first: an opportunistic one, then a plain-text fallback one (TLS failed with
 *    that address within the idle time). Under MTA-STS enforce there is no fallback: the TLS
 *    failure is the target's failure (4.7.5), and the next target is tried.
 *  - Once MAIL FROM was sent, the replies of that server are the result. A session whose
 *    transaction ended cleanly goes back to the cache; any other is closed.
 *  - A "slow down" reply (421, a rate limit) closes every idle connection to that destination.
 *  - Timeouts per phase (RFC 5321 4.5.3.2): connect, greeting (also covers EHLO/STARTTLS),
 *    each command, and the final reply after the data ("." may take 10 minutes, 4.5.3.2.6).
 */
import type { AttemptResult } from '../domain/delivery-result.js';
import type { AbortLike } from './attempt-abort.js';
import { ConnectionCache, destinationKey } from './connection-cache.js';
import { failureResult, sessionSlowsDown, slowsDown, type SessionFailure, type Target } from './smtp-results.js';
import { abortedFailure, openSession, type Opened, type SmtpSession, type SmtpTimeouts } from './smtp-session.js';
import { transact } from './smtp-transaction.js';
import { failureOutcome, sessionOutcome, type TlsOutcome } from './tls-outcome.js';
import { fallbackReason, firstLevel, requiredTlsFailure, type TlsLevel, type TlsPolicy } from './tls-policy.js';

export type { Target } from './smtp-results.js';
export type { SmtpTimeouts } from './smtp-session.js';

export const DEFAULT_SMTP_TIMEOUTS: SmtpTimeouts = { connectMs: 30_000, greetingMs: 300_000, commandMs: 300_000, dataMs: 600_000 };

/** Addresses tried per attempt before giving up for now. */
export const MAX_TARGETS = 5;

/** The kept connections of one dispatcher. */
export type SmtpConnectionCache = ConnectionCache<SmtpSession>;

export interface SmtpAttemptInput {
  targets: readonly Target[];
  port: number;
  /** Our EHLO name (config.hostname), RFC 5321 4.1.1.1. */
  heloName: string;
  /** Our local address; undefined lets the OS choose. Part of the destination key. */
  sourceAddress?: string;
  /** Envelope sender, RFC 5321 4.1.1.2 (the return path). */
  sender: string;
  recipients: readonly string[];
  body: Buffer;
  timeouts: SmtpTimeouts;
  /** Kept connections; without it every attempt opens and quits its own. */
  cache?: SmtpConnectionCache;
  /** The MX site's own messages-per-connection limit, if it has one (else the cache's default). */
  maxMessagesPerConnection?: number;
  /** Aborting closes the connection; unfinished recipients are deferred. */
  signal?: AbortLike;
  /** Awaited after the 354 reply, before the message is sent (the dispatcher's pacer). */
  beforeBody?: () => Promise<void> | undefined;
  /** Asked right before MAIL FROM (smtp-transaction.ts): false sends nothing and ends the attempt. */
  stillWanted?: () => boolean;
  /** TLS for these targets (tls-policy.ts): opportunistic when absent; MTA-STS enforce requires verified TLS. */
  tlsPolicy?: TlsPolicy;
  /** Trusted roots for certificate checks (node's plus the operator's extra CA); node's when absent. */
  ca?: string[];
  /** Told the outcome of each TLS negotiation with a target on a new connection (TLS-RPT, RFC 8460). */
  onTlsNegotiation?: (target: Target, outcome: TlsOutcome) => void;
}

export async function deliverOverSmtp(input: SmtpAttemptInput): Promise<AttemptResult> {
  let failure: SessionFailure | undefined;
  for (const target of input.targets.slice(0, MAX_TARGETS)) {
    if (input.signal?.aborted) break;
    const sent = await transactOnTarget(target, input);
    if ('result' in sent) return sent.result;
    if (sessionSlowsDown(sent.failure)) for (const level of LEVELS) input.cache?.closeIdle(keyOf(target, level, input));
    // Keep the most telling failure: a server's reply beats "connection refused".
    if (!failure || sent.failure.raw || !failure.raw) failure = sent.failure;
    // Our own address cannot be bound: every other target would fail the same way.
    if (sent.failure.localError) {
      failure = sent.failure;
      break;
    }
  }
  return failureResult(input.recipients, failure ?? abortedFailure(input.targets[0]));
}

const LEVELS: readonly TlsLevel[] = ['may', 'none', 'verify', 'dane'];

function keyOf(target: Target, level: TlsLevel, input: SmtpAttemptInput): string {
  return destinationKey({ address: target.address, port: input.port, source: input.sourceAddress, tls: level, verifiedHost: target.host });
}

/**
 * The transaction over a kept connection to the target or a new one. A kept connection whose
 * pipelined RSET failed is closed and the next one (or a new one) tried, as after an awaited RSET.
 */
async function transactOnTarget(target: Target, input: SmtpAttemptInput): Promise<{ result: AttemptResult } | { failure: SessionFailure }> {
  for (;;) {
    const opened = await tlsSessionFor(target, input);
    if (!opened.ok) return { failure: opened.failure };
    const { session, reused, resetPending, key } = opened;
    const transacted = await transact(session, input, { reset: resetPending });
    if ('resetFailed' in transacted) continue;
    const { result, clean } = transacted;
    if (clean && input.cache) input.cache.keep(key, session, input.maxMessagesPerConnection);
    else void session.quit();
    // A clean transaction is one that did not slow down (smtp-transaction.ts): only the others are asked.
    if (!clean && slowsDown(result)) input.cache?.closeIdle(key);
    // Not {...result, reused}: V8 builds new hidden classes for it on every call (bench/RESULTS.md, issue 36).
    return { result: Object.assign({}, result, { reused }) };
  }
}

/** An open session and the cache key it is kept under after a clean transaction. */
type KeyedSession = { ok: true; session: SmtpSession; reused: boolean; resetPending: boolean; key: string };
type Session = KeyedSession | Extract<Opened, { ok: false }>;

/**
 * A session at the policy's TLS level. Opportunistic: a kept `may` connection, a kept plain-text
 * fallback one, a new one with STARTTLS, and after a TLS failure a new one without (RFC 7435).
 * Enforce: a kept or new `verify` connection, a TLS failure being the target's failure.
 */
async function tlsSessionFor(target: Target, input: SmtpAttemptInput): Promise<KeyedSession | Extract<Opened, { ok: false }>> {
  // DANE, where the host's TLSA records make TLS mandatory, wins over MTA-STS (RFC 8461 2).
  const level: TlsLevel = target.dane ? 'dane' : firstLevel(input.tlsPolicy);
  const key = keyOf(target, level, input);
  const plainKey = keyOf(target, 'none', input);
  const opened = await sessionFor(target, level === 'may' ? [key, plainKey] : [key], input, level);
  if (opened.ok) {
    // Under DANE the TLSA match authenticated the session (smtp-session.ts), not the CA roots.
    const wantsVerified = level !== 'dane' && input.tlsPolicy !== undefined && input.tlsPolicy.mode !== 'opportunistic';
    if (!opened.reused) input.onTlsNegotiation?.(target, sessionOutcome(opened.session.tls, opened.session.tlsDetail, wantsVerified));
    return opened;
  }
  if (opened.failure.phase !== 'tls') return opened;
  input.onTlsNegotiation?.(target, failureOutcome(opened.failure));
  // A 421 to STARTTLS is the server closing the session (RFC 5321 3.8), not a TLS problem.
  if (opened.failure.reply.code === 421 || input.signal?.aborted) return opened;
  if (level !== 'may') return { ok: false, failure: requiredTlsFailure(opened.failure, level, input.tlsPolicy) };
  const plain = await openSession(target, { ...input, tlsLevel: 'none', plainReason: fallbackReason(opened.failure) });
  return plain.ok ? { ok: true, session: plain.session, reused: false, resetPending: false, key: plainKey } : plain;
}

/**
 * A kept connection under one of `keys`, in order, else a new one at `tlsLevel` (kept under the
 * first key). A kept one's RSET (RFC 5321 4.1.1.5) is awaited here, or, when the server pipelines
 * (RFC 2920), left to the transaction to write ahead of its MAIL FROM (resetPending): one write
 * and no round trip of its own.
 */
async function sessionFor(target: Target, keys: readonly string[], input: SmtpAttemptInput, tlsLevel: TlsLevel): Promise<Session> {
  for (const key of keys) {
    for (let kept = input.cache?.take(key); kept; kept = input.cache?.take(key)) {
      if (kept.usable && kept.pipelinesReset && !input.signal?.aborted) return { ok: true, session: kept, reused: true, resetPending: true, key };
      if (await kept.reset({ commandMs: input.timeouts.commandMs, signal: input.signal })) return { ok: true, session: kept, reused: true, resetPending: false, key };
    }
  }
  if (input.signal?.aborted) return { ok: false, failure: abortedFailure(target) };
  const opened = await openSession(target, { ...input, tlsLevel });
  return opened.ok ? { ok: true, session: opened.session, reused: false, resetPending: false, key: keys[0] } : opened;
}
