/**
 * The LMDB engine's LmdbIdempotency: the port's verbs over store/lmdb/idempotency.ts.
 *
 * Claims live in this engine's memory, not in the database: an LMDB store has one writing
 * process (the daemon; folder-lock.ts), so a claim table held by that process is seen by every
 * request that can commit to the store, and claim() checks the record and takes the claim in one
 * synchronous step (insert-if-absent: no other claim runs in between). A claim is not worth an
 * fsync of its own here, and one left by a process that died goes with that process, as the
 * port asks of an engine shared by several processes after `leaseMs`; the records themselves
 * are durable, written by the commit verbs in the same write as their effect.
 */
import type { Store } from '../env.js';
import type { ClaimResult, IdempotencyClaim, IdempotencyKey, IdempotencyPort, IdempotencyRecord } from '../../port/idempotency.js';
import { getIdempotency, sweepIdempotency } from '../idempotency.js';

interface HeldClaim {
  claimNo: string;
  settled: Promise<void>;
  settle: () => void;
}

export class LmdbIdempotency implements IdempotencyPort {
  private readonly claims = new Map<string, HeldClaim>();
  private claimsMade = 0;

  constructor(private readonly store: Store) {}

  async claim(q: IdempotencyKey & { nowMs: number; leaseMs: number }): Promise<ClaimResult> {
    const slot = slotOf(q);
    if (this.claims.has(slot)) return { status: 'busy' };
    const record = getIdempotency(this.store, q.accountId, q.key, q.nowMs);
    if (record) return { status: 'recorded', record };
    let settle!: () => void;
    const settled = new Promise<void>((resolve) => (settle = resolve));
    const claimNo = String(++this.claimsMade);
    this.claims.set(slot, { claimNo, settled, settle });
    return { status: 'claimed', claim: { accountId: q.accountId, key: q.key, claimNo } };
  }

  async release(claim: IdempotencyClaim): Promise<void> {
    const slot = slotOf(claim);
    const held = this.claims.get(slot);
    if (held?.claimNo !== claim.claimNo) return;
    this.claims.delete(slot);
    held.settle();
  }

  async settled(key: IdempotencyKey): Promise<void> {
    await this.claims.get(slotOf(key))?.settled;
  }

  async get(q: IdempotencyKey & { nowMs: number }): Promise<IdempotencyRecord | undefined> {
    return getIdempotency(this.store, q.accountId, q.key, q.nowMs);
  }

  sweep(nowMs: number, max?: number): Promise<number> {
    return sweepIdempotency(this.store, nowMs, max);
  }
}

function slotOf(k: IdempotencyKey): string {
  return `${k.accountId}\u0000${k.key}`;
}
