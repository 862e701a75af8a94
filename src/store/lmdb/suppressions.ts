/** Suppression lists: per channel and mail type (DESIGN.md). */
import type { MailType, SuppressionReason, SuppressionRecord } from '../../domain/types.js';
import type { SuppressionOp, SuppressionPage, SuppressionPageQuery } from '../port/suppressions.js';
import { dbsOf } from './databases.js';
import type { Store } from './env.js';
import { KEY_MAX } from './layout.js';

export function isSuppressed(store: Store, channelId: string, mailType: MailType, email: string): boolean {
  return dbsOf(store).suppressions.get([channelId, mailType, email.toLowerCase()]) !== undefined;
}

export function getSuppression(store: Store, channelId: string, mailType: MailType, email: string): SuppressionRecord | undefined {
  return dbsOf(store).suppressions.get([channelId, mailType, email.toLowerCase()]) as SuppressionRecord | undefined;
}

/** Inside a write. Returns false when the address was already suppressed (the first reason stays). */
export function addSuppressionInTxn(
  store: Store,
  s: { channelId: string; mailType: MailType; email: string; reason: SuppressionReason },
): boolean {
  const key = [s.channelId, s.mailType, s.email.toLowerCase()];
  if (dbsOf(store).suppressions.get(key) !== undefined) return false;
  const record: SuppressionRecord = { ...s, email: s.email.toLowerCase(), createdAt: new Date().toISOString() };
  dbsOf(store).suppressions.put(key, record);
  return true;
}

/** Inside a write. Returns false when the address was not suppressed. */
export function removeSuppressionInTxn(store: Store, s: { channelId: string; mailType: MailType; email: string }): boolean {
  const key = [s.channelId, s.mailType, s.email.toLowerCase()];
  if (dbsOf(store).suppressions.get(key) === undefined) return false;
  dbsOf(store).suppressions.remove(key);
  return true;
}

/**
 * One write applying a request's adds and removes in order (SuppressionsPort.apply): each is
 * checked and written inside the same transaction, so all commit or none does. Returns, per
 * change, whether it changed anything.
 */
export async function applySuppressions(store: Store, channelId: string, mailType: MailType, ops: readonly SuppressionOp[]): Promise<boolean[]> {
  return store.write(() =>
    ops.map((o) =>
      o.op === 'add'
        ? addSuppressionInTxn(store, { channelId, mailType, email: o.email, reason: o.reason })
        : removeSuppressionInTxn(store, { channelId, mailType, email: o.email }),
    ),
  );
}

export function listSuppressions(store: Store, channelId: string, mailType?: MailType): SuppressionRecord[] {
  const start = mailType ? [channelId, mailType] : [channelId];
  const end = mailType ? [channelId, mailType, KEY_MAX] : [channelId, KEY_MAX];
  return [...dbsOf(store).suppressions.getRange({ start, end })].map((e) => e.value as SuppressionRecord);
}

/** Channel deletion cleanup (runs inside the delete transaction). */
export function removeChannelSuppressionsInTxn(store: Store, channelId: string): void {
  for (const { key } of dbsOf(store).suppressions.getRange({ start: [channelId], end: [channelId, KEY_MAX] })) {
    dbsOf(store).suppressions.remove(key);
  }
}

/**
 * One page of a channel's list for a mail type, in address order, with the number of matches.
 * Walks the (channel, mail type) prefix once; filters are checked on the stored record.
 */
export function pageSuppressions(
  store: Store,
  q: SuppressionPageQuery,
): SuppressionPage {
  const needle = q.email?.toLowerCase();
  const results: SuppressionRecord[] = [];
  let totalCount = 0;
  for (const { key, value } of dbsOf(store).suppressions.getRange({ start: [q.channelId, q.mailType], end: [q.channelId, q.mailType, KEY_MAX] })) {
    const s = value as SuppressionRecord;
    if (q.reason && s.reason !== q.reason) continue;
    if (needle && !String((key as string[])[2]).includes(needle)) continue;
    if (totalCount >= q.offset && results.length < q.limit) results.push(s);
    totalCount++;
  }
  return { totalCount, results };
}
