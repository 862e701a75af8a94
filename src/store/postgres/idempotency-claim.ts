/**
 * IdempotencyPort.claim over PostgreSQL: insert-if-absent on idempotency_claims, then the look
 * for a live record, in one transaction.
 *
 * Atomic across nodes: INSERT … ON CONFLICT DO UPDATE … WHERE the old claim's lease ended makes
 * of concurrent claims of one key exactly one winner (a racing insert waits for the first one's
 * commit, then finds its live claim and updates nothing: busy). The record is looked for AFTER
 * the claim is taken, in a new snapshot (READ COMMITTED): a request that committed its record and
 * then released its claim is seen as `recorded`, never as a free key, so a losing request never
 * produces a second effect.
 */
import type { ClaimResult, IdempotencyKey, IdempotencyRecord } from '../port/idempotency.js';
import type { PgContext } from './context.js';

export async function idempotencyClaim(ctx: PgContext, q: IdempotencyKey & { nowMs: number; leaseMs: number }, claimNo: string): Promise<ClaimResult> {
  return ctx.begin(async (tx): Promise<ClaimResult> => {
    const won = await tx`
      INSERT INTO idempotency_claims (account_id, key, claim_no, until_ms)
      VALUES (${q.accountId}, ${q.key}, ${claimNo}, ${q.nowMs + q.leaseMs})
      ON CONFLICT (account_id, key) DO UPDATE SET claim_no = excluded.claim_no, until_ms = excluded.until_ms
        WHERE idempotency_claims.until_ms <= ${q.nowMs}
      RETURNING 1`;
    if (won.length === 0) return { status: 'busy' };
    const [row] = await tx<{ doc: IdempotencyRecord }[]>`
      SELECT doc FROM idempotency_records WHERE account_id = ${q.accountId} AND key = ${q.key} AND expires_at_ms > ${q.nowMs}`;
    if (!row) return { status: 'claimed', claim: { accountId: q.accountId, key: q.key, claimNo } };
    // A replay: the key is not held (this claim never was, for anyone else to see).
    await tx`DELETE FROM idempotency_claims WHERE account_id = ${q.accountId} AND key = ${q.key} AND claim_no = ${claimNo}`;
    return { status: 'recorded', record: row.doc };
  });
}
