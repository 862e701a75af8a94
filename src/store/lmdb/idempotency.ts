/**
 * Idempotency records (DESIGN.md): per account and key, the request fingerprint and the first
 * response, kept for one hour. Expired records are ignored on read and removed by the sweeper.
 */
import { AppError } from '../../domain/errors.js';
import type { IdempotencyRecord } from '../port/idempotency.js';
import { dbsOf } from './databases.js';
import type { Store } from './env.js';

export type { IdempotencyRecord };

export function getIdempotency(store: Store, accountId: string, key: string, nowMs: number): IdempotencyRecord | undefined {
  const r = dbsOf(store).idempotency.get([accountId, key]) as IdempotencyRecord | undefined;
  return r && r.expiresAtMs > nowMs ? r : undefined;
}

/**
 * Inside a write, in the same transaction as the effect it remembers. Insert-if-absent: a key
 * that holds a live record already (another request's, whose claim this one should have seen:
 * repos/idempotency.ts) throws conflict and the whole write rolls back; an expired one is replaced.
 */
export function putIdempotencyInTxn(store: Store, accountId: string, key: string, record: IdempotencyRecord): void {
  const old = dbsOf(store).idempotency.get([accountId, key]) as IdempotencyRecord | undefined;
  if (old && old.expiresAtMs > Date.parse(record.createdAt)) {
    throw new AppError('conflict', 'This idempotency key was used by another request at the same time');
  }
  if (old) dbsOf(store).idempotencyExpiry.remove([old.expiresAtMs, accountId, key]);
  dbsOf(store).idempotency.put([accountId, key], record);
  dbsOf(store).idempotencyExpiry.put([record.expiresAtMs, accountId, key], 1);
}

/** Removes up to `max` expired records; returns how many. */
export async function sweepIdempotency(store: Store, nowMs: number, max = 1000): Promise<number> {
  return store.write(() => {
    let n = 0;
    for (const { key } of dbsOf(store).idempotencyExpiry.getRange({ end: [nowMs], limit: max })) {
      const [, accountId, k] = key as [number, string, string];
      dbsOf(store).idempotencyExpiry.remove(key);
      const r = dbsOf(store).idempotency.get([accountId, k]) as IdempotencyRecord | undefined;
      if (r && r.expiresAtMs <= nowMs) dbsOf(store).idempotency.remove([accountId, k]);
      n++;
    }
    return n;
  });
}
