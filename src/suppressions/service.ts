/**
 * Suppression verbs of the API (spec 4.12, api-surface suppressions.list): the policy and the
 * access rule (the channel named must be one the key may act on: channels/service.ts channelFor)
 * live here so the route only parses and maps. Each add/remove request is one write transaction,
 * so a request's addresses are all applied or none are.
 */
import { channelFor } from '../channels/service.js';
import { normalizeEmail } from '../domain/address.js';
import type { MailType, Principal, SuppressionReason, SuppressionRecord } from '../domain/types.js';
import type { LmdbStore } from '../store/lmdb/engine.js';
import { addSuppressionInTxn, pageSuppressions, removeSuppressionInTxn } from '../store/lmdb/suppressions.js';

export interface SuppressionChange {
  channelId: string;
  mailType: MailType;
  emails: string[];
}

export interface ChangeResult {
  email: string;
  success: boolean;
  message: string;
}

/** 404 channel_not_found or 403 for a channel the principal may not act on, before any write. */
export async function changeSuppressions(store: LmdbStore, p: Principal, mode: 'add' | 'remove', change: SuppressionChange): Promise<ChangeResult[]> {
  const c = { ...change, channelId: channelFor(store, p, change.channelId).id };
  return store.write(() =>
    c.emails.map((raw): ChangeResult => {
      const n = normalizeEmail(raw.trim());
      if ('problem' in n) return { email: raw, success: false, message: `invalid address: ${n.problem.message}` };
      const key = { channelId: c.channelId, mailType: c.mailType, email: n.email };
      if (mode === 'add') {
        const added = addSuppressionInTxn(store, { ...key, reason: 'manual' });
        return { email: n.email.toLowerCase(), success: true, message: added ? 'suppressed' : 'already suppressed' };
      }
      const removed = removeSuppressionInTxn(store, key);
      return { email: n.email.toLowerCase(), success: removed, message: removed ? 'removed' : 'not suppressed' };
    }),
  );
}

export interface SuppressionQuery {
  channelId: string;
  mailType: MailType;
  reason?: SuppressionReason;
  /** Case-insensitive substring of the address. */
  email?: string;
  limit: number;
  offset: number;
}

/** The channel is checked as for changeSuppressions. */
export function listSuppressionPage(
  store: LmdbStore,
  p: Principal,
  query: SuppressionQuery,
): { totalCount: number; results: Pick<SuppressionRecord, 'email' | 'reason' | 'createdAt'>[] } {
  const q = { ...query, channelId: channelFor(store, p, query.channelId).id };
  const page = pageSuppressions(store, q);
  return { totalCount: page.totalCount, results: page.results.map((s) => ({ email: s.email, reason: s.reason, createdAt: s.createdAt })) };
}
