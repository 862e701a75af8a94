/**
 * The pending accounts' send quota (config limits.pendingSendLimit): the recipients an account
 * may ever send to while pending, counted in the transaction that accepts them (the submission
 * commit, a broadcast's accept), so that the check and the count are one write
 * (store/port/index.ts: a check-then-write rule is one atomic verb).
 */
import { AppError } from '../../domain/errors.js';
import type { Tx } from './client.js';

/**
 * Inside the accepting transaction: counts `wanted` recipients against the account's total, or
 * throws 403 send_limit_exceeded (the caller's transaction then rolls back: nothing is written).
 *
 * Atomic across nodes: one INSERT … ON CONFLICT DO UPDATE … WHERE used + wanted <= limit. Two
 * racing transactions on one account serialize on the row (the second waits for the first to
 * commit, then READ COMMITTED re-checks the condition against the committed count); the first
 * one ever inserts the row under the primary key, which makes a racing insert wait the same way.
 */
export async function reserveSendQuota(tx: Tx, accountId: string, wanted: number, limit: number): Promise<void> {
  const rows = await tx<{ used: number }[]>`
    INSERT INTO send_quota AS q (account_id, used)
    SELECT ${accountId}, ${wanted}::int8 WHERE ${wanted}::int8 <= ${limit}::int8
    ON CONFLICT (account_id) DO UPDATE SET used = q.used + EXCLUDED.used
      WHERE q.used + EXCLUDED.used <= ${limit}::int8
    RETURNING used`;
  if (rows.length > 0) return;
  const [row] = await tx<{ used: number }[]>`SELECT used FROM send_quota WHERE account_id = ${accountId}`;
  const used = row?.used ?? 0;
  throw new AppError('send_limit_exceeded', `Pending accounts may send ${limit} emails in total; ${Math.max(0, limit - used)} left`);
}
