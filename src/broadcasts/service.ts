/**
 * Broadcasts as a resource (api-surface.md broadcasts.*): list, retrieve, failures, suppressions
 * and cancel, with the access rules of spec section 5. Status and completion are derived from
 * the record and the counters kept as messages finish (store/broadcast-stats.ts), never from a
 * scan of messages or events.
 */
import { AppError } from '../domain/errors.js';
import type { AddressValue, Principal, Tracking } from '../domain/types.js';
import type { BroadcastCommon } from '../submission/broadcast.js';
import type { BroadcastStatus, BroadcastSummary } from '../domain/wire.js';
import type { LmdbStore } from '../store/lmdb/engine.js';
import { getChannelRecord } from '../store/lmdb/channels.js';
import { channelFor } from '../channels/service.js';
import { broadcastCounters } from '../store/lmdb/broadcast-stats.js';
import {
  broadcastCompleted,
  broadcastFailures,
  broadcastSuppressions,
  cancelBroadcast,
  getBroadcast,
  listChannelBroadcasts,
  type BroadcastRecord,
} from '../store/lmdb/broadcasts.js';
import type { StatCounters } from '../store/lmdb/stats.js';

export type { BroadcastStatus, BroadcastSummary };
export const BROADCAST_STATUSES: readonly BroadcastStatus[] = ['accepted', 'processing', 'completed', 'canceled'];

type Record_ = BroadcastRecord<BroadcastCommon>;

export interface BroadcastDetail extends BroadcastSummary {
  failed: number;
  suppressed: number;
  /** Messages a cancel took out of the queue before any attempt (not in the SDKs' shape; extra). */
  canceled: number;
  content: {
    from: AddressValue;
    replyTo: AddressValue[];
    template: { subject: string; html?: string; text?: string };
    attachments: { fileName: string; disposition: string; size: number }[];
    tags: string[];
    headers: Record<string, string>;
    metadata: Record<string, string>;
  };
  tracking: Tracking;
  statistics: StatCounters;
}

export interface Page {
  limit: number;
  offset: number;
}

export function statusOf(store: LmdbStore, b: BroadcastRecord): BroadcastStatus {
  if (b.canceledAt) return 'canceled';
  if (broadcastCompleted(store, b)) return 'completed';
  return b.cursor === 0 ? 'accepted' : 'processing';
}

/**
 * Entries handled, in whole percent rounded down ("100%" only when all are): an entry is
 * handled when it became a failure row (build error, all recipients suppressed) or its message
 * left the queue (delivered, bounced, expired, dropped or canceled). Entries a cancel kept from
 * being expanded are not handled.
 */
function completionOf(store: LmdbStore, b: BroadcastRecord): string {
  // Records of an older version count no finished messages: there, expanded is handled.
  const handled = b.failed === undefined ? b.cursor : b.skipped + b.failed + broadcastCounters(store, b.id).finished;
  return `${b.total === 0 ? 100 : Math.floor((Math.min(handled, b.total) * 100) / b.total)}%`;
}

function summary(store: LmdbStore, b: Record_): BroadcastSummary {
  return { id: b.id, createdAt: b.createdAt, status: statusOf(store, b), subject: b.common.template.subject ?? '', completion: completionOf(store, b), messages: b.total };
}

function detail(store: LmdbStore, b: Record_): BroadcastDetail {
  const c = b.common;
  const counters = broadcastCounters(store, b.id);
  return {
    ...summary(store, b),
    failed: b.skipped + (b.failed ?? 0),
    suppressed: b.suppressed ?? 0,
    canceled: counters.canceled,
    content: {
      from: c.from,
      replyTo: c.replyTo,
      template: { subject: c.template.subject ?? '', html: c.template.html, text: c.template.text },
      attachments: c.attachments.map((a) => ({ fileName: a.fileName, disposition: a.disposition, size: a.size })),
      tags: c.tags ?? [],
      headers: c.headers ?? {},
      metadata: c.metadata ?? {},
    },
    tracking: c.tracking,
    statistics: counters.statistics,
  };
}

/** The broadcast if the principal may see it: unknown 404; another account's or channel's 403. */
function broadcastFor(store: LmdbStore, p: Principal, id: string): Record_ {
  const b = getBroadcast<BroadcastCommon>(store, id.toLowerCase());
  if (!b) throw new AppError('not_found', `Broadcast ${id} does not exist`);
  if (b.accountId !== p.accountId || (p.channelId && p.channelId !== b.channelId)) {
    throw new AppError('forbidden', 'The API key may not access this broadcast');
  }
  // A deleted channel's broadcasts are gone from the 204 on, before the purger reaches them.
  if (getChannelRecord(store, b.channelId)?.deletedAt) throw new AppError('not_found', `Broadcast ${id} does not exist`);
  return b;
}

export function listBroadcasts(
  store: LmdbStore,
  p: Principal,
  q: Page & { channelId: string; status?: BroadcastStatus; subject?: string },
): { totalCount: number; results: BroadcastSummary[] } {
  const c = channelFor(store, p, q.channelId);
  const needle = q.subject?.toLowerCase();
  const page = listChannelBroadcasts(store, {
    channelId: c.id,
    limit: q.limit,
    offset: q.offset,
    match: (b) =>
      (!needle || ((b as Record_).common.template.subject ?? '').toLowerCase().includes(needle)) && (!q.status || statusOf(store, b) === q.status),
  });
  return { totalCount: page.totalCount, results: page.results.map((b) => summary(store, b as Record_)) };
}

export function retrieveBroadcast(store: LmdbStore, p: Principal, id: string): BroadcastDetail {
  return detail(store, broadcastFor(store, p, id));
}

export function listFailures(store: LmdbStore, p: Principal, id: string, page: Page) {
  const b = broadcastFor(store, p, id);
  const { totalCount, results } = broadcastFailures(store, b.id, page);
  return {
    totalCount,
    results: results.map((f) => ({ recipients: { to: f.to, cc: f.cc, bcc: f.bcc }, messageIndex: f.index, errorCode: f.code, errorMessage: f.message })),
  };
}

export function listSuppressed(store: LmdbStore, p: Principal, id: string, page: Page): { totalCount: number; results: string[] } {
  const b = broadcastFor(store, p, id);
  return broadcastSuppressions(store, b.id, page);
}

/** Cancels (idempotent on a canceled broadcast); a completed one is 409 conflict. */
export async function cancel(store: LmdbStore, p: Principal, id: string, now = new Date()): Promise<BroadcastDetail> {
  const b = broadcastFor(store, p, id);
  const r = await cancelBroadcast(store, b.id, now);
  if (r.status === 'completed') throw new AppError('conflict', `Broadcast ${b.id} is completed; there is nothing left to cancel`);
  if (r.status !== 'canceled') throw new AppError('not_found', `Broadcast ${id} does not exist`);
  return detail(store, r.record as Record_);
}
