/**
 * IdempotencyPort over PostgreSQL (store/port/idempotency.ts). The records are written by the
 * commit verbs with their effect (webhooks-tx.ts putIdempotency); the claims, which LMDB keeps
 * in the engine's memory (one process writes its store), are rows of idempotency_claims here, so
 * that a request on another node sees them, each with a lease (until_ms) after which a claim of
 * a node that died no longer holds the key.
 */
import { randomUUID } from 'node:crypto';
import type { ClaimResult, IdempotencyKey, IdempotencyPort, IdempotencyRecord } from '../../port/idempotency.js';
import type { PgContext } from '../context.js';
import { idempotencyClaim } from '../idempotency-claim.js';
import { KeyedOrder } from '../idempotency-order.js';
import { SettleWaiters } from '../idempotency-settle.js';
import { sweepIdempotency } from '../idempotency-sweep.js';

export function pgIdempotency(ctx: PgContext): IdempotencyPort {
  const { sql } = ctx;
  const waiters = new SettleWaiters();
  const order = new KeyedOrder();
  return {
    /** In call order per key within this process (idempotency-order.ts). */
    claim: (q): Promise<ClaimResult> => order.run(`${q.accountId}\u0000${q.key}`, () => idempotencyClaim(ctx, q, randomUUID())),

    /** Only the claim named by claimNo (a claim that ended already, or another's, is left alone). */
    async release(claim) {
      await ctx.begin((tx) => tx`DELETE FROM idempotency_claims WHERE account_id = ${claim.accountId} AND key = ${claim.key} AND claim_no = ${claim.claimNo}`);
      waiters.wake(claim);
    },

    /**
     * Until no live claim holds the key. A claim released in this process wakes its waiters at
     * once; one held on another node is looked at again after a pause that grows from
     * SETTLE_POLL_MS to SETTLE_POLL_MAX_MS (a busy key is rare: two requests with one key at the
     * same moment; a long wait means the holder is slow or its node died).
     */
    async settled(key: IdempotencyKey) {
      for (let pause = SETTLE_POLL_MS; ; pause = Math.min(pause * 2, SETTLE_POLL_MAX_MS)) {
        const [row] = await sql<{ until_ms: number }[]>`SELECT until_ms FROM idempotency_claims WHERE account_id = ${key.accountId} AND key = ${key.key}`;
        if (!row || row.until_ms <= Date.now()) return;
        await waiters.wait(key, Math.min(pause, row.until_ms - Date.now()));
      }
    },

    async get(q) {
      const [row] = await sql<{ doc: IdempotencyRecord }[]>`
        SELECT doc FROM idempotency_records WHERE account_id = ${q.accountId} AND key = ${q.key} AND expires_at_ms > ${q.nowMs}`;
      return row?.doc;
    },

    sweep: (nowMs, max = 1000) => sweepIdempotency(ctx, nowMs, max),
  };
}

/** How often settled() looks again at a claim held on another node: first, and at the longest. */
const SETTLE_POLL_MS = 25;
const SETTLE_POLL_MAX_MS = 400;
