/**
 * Suppression verbs of the API (spec 4.12, api-surface suppressions.list): the policy and the
 * access rule (the channel named must be one the key may act on: channels/service.ts accessibleChannel)
 * live here so the route only parses and maps. Each add/remove request is one store verb
 * (SuppressionsPort.apply), so a request's addresses are all applied or none are.
 */
import { accessibleChannel } from '../channels/service.js';
import { normalizeEmail } from '../domain/address.js';
import type { MailType, Principal, SuppressionRecord } from '../domain/types.js';
import type { StorePort } from '../store/port/index.js';
import type { SuppressionOp, SuppressionPageQuery } from '../store/port/suppressions.js';

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

/**
 * 404 channel_not_found or 403 for a channel the principal may not act on, before any write.
 * Invalid addresses are answered without a change; the valid ones go to the store in one verb.
 */
export async function changeSuppressions(store: StorePort, p: Principal, mode: 'add' | 'remove', change: SuppressionChange): Promise<ChangeResult[]> {
  const channelId = (await accessibleChannel(store, p, change.channelId)).id;
  const parsed = change.emails.map((raw) => ({ raw, n: normalizeEmail(raw.trim()) }));
  const ops: SuppressionOp[] = [];
  for (const { n } of parsed) if (!('problem' in n)) ops.push(mode === 'add' ? { op: 'add', email: n.email, reason: 'manual' } : { op: 'remove', email: n.email });
  const changed = await store.suppressions.apply(channelId, change.mailType, ops);
  let i = 0;
  return parsed.map(({ raw, n }): ChangeResult => {
    if ('problem' in n) return { email: raw, success: false, message: `invalid address: ${n.problem.message}` };
    const done = changed[i++];
    const email = n.email.toLowerCase();
    if (mode === 'add') return { email, success: true, message: done ? 'suppressed' : 'already suppressed' };
    return { email, success: done, message: done ? 'removed' : 'not suppressed' };
  });
}

/** The channel is checked as for changeSuppressions. */
export async function listSuppressionPage(
  store: StorePort,
  p: Principal,
  query: SuppressionPageQuery,
): Promise<{ totalCount: number; results: Pick<SuppressionRecord, 'email' | 'reason' | 'createdAt'>[] }> {
  const q = { ...query, channelId: (await accessibleChannel(store, p, query.channelId)).id };
  const page = await store.suppressions.page(q);
  return { totalCount: page.totalCount, results: page.results.map((s) => ({ email: s.email, reason: s.reason, createdAt: s.createdAt })) };
}
