/**
 * The pending accounts' send quota (config limits.pendingSendLimit): the recipients an account
 * may ever send to while pending, counted in the commit that accepts them (messages.ts,
 * broadcasts.ts), so that the check and the count are one conditional update of one write.
 */
import { AppError } from '../../domain/errors.js';
import { dbsOf } from './databases.js';
import type { Store } from './env.js';

/** Inside a write: counts `wanted` emails against a pending account's total, or throws 403 send_limit_exceeded. */
export function reserveSendQuotaInTxn(store: Store, accountId: string, wanted: number, limit: number): void {
  const key = ['sent', accountId];
  const used = (dbsOf(store).counters.get(key) as number | undefined) ?? 0;
  if (used + wanted > limit) {
    throw new AppError('send_limit_exceeded', `Pending accounts may send ${limit} emails in total; ${Math.max(0, limit - used)} left`);
  }
  dbsOf(store).counters.put(key, used + wanted);
}
