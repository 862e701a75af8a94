/**
 * Idempotency-Key handling (DESIGN.md): 1-256 characters, scoped to the credential's account,
 * one hour. A replay with the same request returns the first response and does nothing; the
 * same key with a different request is 422 validation_failed on /Idempotency-Key. Concurrent
 * requests with one key are serialized in memory so only one of them can do the work.
 */
import { createHash } from 'node:crypto';
import { AppError } from '../domain/errors.js';
import type { LmdbStore } from '../store/lmdb/engine.js';
import { getIdempotency, type IdempotencyRecord } from '../store/lmdb/idempotency.js';

export const IDEMPOTENCY_WINDOW_MS = 3_600_000;

export interface IdempotencyContext {
  accountId: string;
  key: string;
  fingerprint: string;
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
export function idempotencyContext(q: { accountId: string; key?: string; route: string; channelId: string; body: unknown }): IdempotencyContext | undefined {
  if (q.key === undefined) return undefined;
  return { accountId: q.accountId, key: q.key, fingerprint: fingerprint({ route: q.route, channel: q.channelId, body: q.body }) };
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
  private readonly inFlight = new Map<string, Promise<unknown>>();

  constructor(private readonly store: LmdbStore, private readonly now: () => number = Date.now) {}

  /**
   * Runs `work` unless a response for this key is stored: then returns that response (same
   * request) or refuses (different request). `work` must store its response with
   * recordFor() in the same transaction as its effect.
   */
  async run<T>(ctx: IdempotencyContext | undefined, work: () => Promise<T>): Promise<{ replayed: boolean; body: T }> {
    if (!ctx) return { replayed: false, body: await work() };
    const slot = `${ctx.accountId}\u0000${ctx.key}`;
    while (this.inFlight.has(slot)) await this.inFlight.get(slot)!.catch(() => undefined);
    const stored = getIdempotency(this.store, ctx.accountId, ctx.key, this.now());
    if (stored) {
      if (stored.fingerprint !== ctx.fingerprint) {
        throw new AppError('validation_failed', 'This Idempotency-Key was used with a different request', {
          errors: { '/Idempotency-Key': [{ code: 'conflict', message: 'was already used with a different request' }] },
        });
      }
      return { replayed: true, body: stored.body as T };
    }
    const p = work();
    this.inFlight.set(slot, p);
    try {
      return { replayed: false, body: await p };
    } finally {
      this.inFlight.delete(slot);
    }
  }

  recordFor(ctx: IdempotencyContext, body: unknown): IdempotencyRecord {
    const now = this.now();
    return { fingerprint: ctx.fingerprint, status: 200, body, createdAt: new Date(now).toISOString(), expiresAtMs: now + IDEMPOTENCY_WINDOW_MS };
  }
}
