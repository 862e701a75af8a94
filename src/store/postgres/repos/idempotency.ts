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
import { SettleWaiters } from '../idempotency-settle.js';

export function pgIdempotency(ctx: PgContext): IdempotencyPort {
  const { sql } = ctx;
  const waiters = new SettleWaiters();
  return {
    claim: (q): Promise<ClaimResult> => idempotencyClaim(ctx, q, randomUUID()),

    /** Only the claim named by claimNo (a claim that ended already, or another's, is left alone). */
    async release(claim) {
      await ctx.begin((tx) => tx`DELETE FROM idempotency_claims WHERE account_id = ${claim.accountId} AND key = ${claim.key} AND claim_no = ${claim.claimNo}`);
      waiters.wake(claim);
    },

    /**
     * Until no live claim holds the key. A claim released in this process wakes its waiters at
     * once; one held on another node is looked at again every SETTLE_POLL_MS (a busy key is
     * rare: two requests with one key at the same moment).
     */
    async settled(key: IdempotencyKey) {
      for (;;) {
        const [row] = await sql<{ until_ms: number }[]>`SELECT until_ms FROM idempotency_claims WHERE account_id = ${key.accountId} AND key = ${key.key}`;
        if (!row || row.until_ms <= Date.now()) return;
        await waiters.wait(key, Math.min(SETTLE_POLL_MS, row.until_ms - Date.now()));
      }
    },

    async get(q) {
      const [row] = await sql<{ doc: IdempotencyRecord }[]>`
        SELECT doc FROM idempotency_records WHERE account_id = ${q.accountId} AND key = ${q.key} AND expires_at_ms > ${q.nowMs}`;
      return row?.doc;
    },

    /**
     * Up to `max` records expired before nowMs (LMDB's range ends before nowMs), oldest first;
     * claims whose lease ended are removed with them (left by nodes that died). SKIP LOCKED: two
     * nodes sweeping at once take different rows.
     */
    async sweep(nowMs, max = 1000) {
      const [row] = await ctx.begin(
        (tx) => tx<{ n: number }[]>`
          WITH d AS (
            DELETE FROM idempotency_records r USING (
              SELECT account_id, key FROM idempotency_records WHERE expires_at_ms < ${nowMs}
              ORDER BY expires_at_ms LIMIT ${max} FOR UPDATE SKIP LOCKED
            ) x
            WHERE r.account_id = x.account_id AND r.key = x.key
            RETURNING 1
          ),
          c AS (
            DELETE FROM idempotency_claims c USING (
              SELECT account_id, key FROM idempotency_claims WHERE until_ms < ${nowMs}
              ORDER BY until_ms LIMIT ${max} FOR UPDATE SKIP LOCKED
            ) x
            WHERE c.account_id = x.account_id AND c.key = x.key AND c.until_ms < ${nowMs}
          )
          SELECT count(*)::int8 AS n FROM d`,
      );
      return row.n;
    },
  };
}

/** How often settled() looks again at a claim held on another node. */
const SETTLE_POLL_MS = 50;
