/**
 * Idempotency-Key handling (DESIGN.md): 1-256 characters, scoped to the credential's account,
 * one hour. A replay with the same request returns the first response and does nothing; the
 * same key with a different request is 422 validation_failed on the header's name (/Idempotency-Key,
 * or the alias it came under). Of concurrent
 * requests with one key only one does the work: the key is claimed in the store first
 * (store/port/idempotency.ts, insert-if-absent), and the others wait for that claim to end.
 */
import { createHash } from 'node:crypto';
import { AppError } from '../domain/errors.js';
import { lateOutcome } from '../domain/request-deadline.js';
import type { ClaimResult, IdempotencyClaim, IdempotencyPort, IdempotencyRecord } from '../store/port/idempotency.js';

export const IDEMPOTENCY_WINDOW_MS = 3_600_000;

/**
 * How long a claim holds a key in an engine shared by several processes, should its process die
 * before it ends the claim: well beyond the longest send (a broadcast of the largest size is
 * validated and stored in seconds), short enough that a retry after a crash is not held long.
 */
const CLAIM_LEASE_MS = 300_000;

export interface IdempotencyContext {
  accountId: string;
  key: string;
  fingerprint: string;
  /** The name the key came under (it has aliases, http/request-headers.ts): a reused key's 422 names it. */
  header: string;
}

/** `header`: the name the key came under (it has aliases, http/request-headers.ts), for the pointer. */
export function checkIdempotencyKey(key: string | undefined, header = 'Idempotency-Key'): string | undefined {
  if (key === undefined) return undefined;
  if (key.length < 1 || key.length > 256 || /[^\x21-\x7e]/.test(key)) {
    throw new AppError('validation_failed', `${header} must be 1 to 256 visible ASCII characters`, {
      errors: { [`/${header}`]: [{ code: 'invalid_format', message: 'must be 1 to 256 visible ASCII characters' }] },
    });
  }
  return key;
}

/** A stable hash of what the request asks for: route, channel and body (canonical JSON). */
export function fingerprint(parts: { route: string; channel?: string; body: unknown }): string {
  return createHash('sha256').update(canonicalJson([parts.route, parts.channel ?? '', parts.body])).digest('hex');
}

/** The idempotency context of a send, or undefined when the request carries no key. */
export function idempotencyContext(q: { accountId: string; key?: string; header?: string; route: string; channelId: string; body: unknown }): IdempotencyContext | undefined {
  if (q.key === undefined) return undefined;
  return { accountId: q.accountId, key: q.key, fingerprint: fingerprint({ route: q.route, channel: q.channelId, body: q.body }), header: q.header ?? 'Idempotency-Key' };
}

function canonicalJson(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonicalJson).join(',')}]`;
  if (v && typeof v === 'object') {
    return `{${Object.keys(v)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonicalJson((v as Record<string, unknown>)[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(v) ?? 'null';
}

export class IdempotencyGate {
  constructor(private readonly store: IdempotencyPort, private readonly now: () => number = Date.now) {}

  /**
   * Runs `work` unless a response for this key is stored: then returns that response (same
   * request) or refuses (different request). `work` must store its response with
   * recordFor() in the same commit as its effect. A request whose key another one holds waits
   * for it, then replays its response, or does the work itself when the other one failed.
   */
  async run<T>(ctx: IdempotencyContext | undefined, work: () => Promise<T>): Promise<{ replayed: boolean; body: T }> {
    if (!ctx) return { replayed: false, body: await work() };
    const key = { accountId: ctx.accountId, key: ctx.key };
    for (;;) {
      const taken = await this.store.claim({ ...key, nowMs: this.now(), leaseMs: CLAIM_LEASE_MS }).catch((err: unknown) => {
        this.releaseLateClaim(err);
        throw err;
      });
      if (taken.status === 'busy') {
        await this.store.settled(key);
        continue;
      }
      if (taken.status === 'recorded') return { replayed: true, body: replayOf<T>(taken.record, ctx) };
      let late: Promise<unknown> | undefined;
      try {
        return { replayed: false, body: await work() };
      } catch (err) {
        late = lateOutcome(err);
        throw err;
      } finally {
        if (late) void this.releaseAfter(late, taken.claim);
        else await this.store.release(taken.claim);
      }
    }
  }

  /**
   * The work's store call had no answer in time (store_timeout): it may still commit, record and
   * all. The claim holds the key until that call has settled, so that a retry with the key waits
   * and then replays the recorded response instead of doing the work a second time.
   */
  private async releaseAfter(late: Promise<unknown>, claim: IdempotencyClaim): Promise<void> {
    await late.catch(() => undefined);
    await this.store.release(claim).catch(() => undefined);
  }

  /** A claim that had no answer in time and is taken late ends then: no request is left to end it, and it would hold the key for CLAIM_LEASE_MS. */
  private releaseLateClaim(err: unknown): void {
    void lateOutcome(err)
      ?.then((taken) => {
        const t = taken as ClaimResult;
        return t.status === 'claimed' ? this.store.release(t.claim) : undefined;
      })
      .catch(() => undefined);
  }

  recordFor(ctx: IdempotencyContext, body: unknown): IdempotencyRecord {
    const now = this.now();
    return { fingerprint: ctx.fingerprint, status: 200, body, createdAt: new Date(now).toISOString(), expiresAtMs: now + IDEMPOTENCY_WINDOW_MS };
  }
}

/** The stored response, if the request is the one that stored it; else the 422 of a reused key. */
function replayOf<T>(stored: IdempotencyRecord, ctx: IdempotencyContext): T {
  if (stored.fingerprint !== ctx.fingerprint) {
    throw new AppError('validation_failed', `This ${ctx.header} was used with a different request`, {
      errors: { [`/${ctx.header}`]: [{ code: 'conflict', message: 'was already used with a different request' }] },
    });
  }
  return stored.body as T;
}
