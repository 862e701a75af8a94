/**
 * Broadcasts as a resource (api-surface.md broadcasts.*): list, retrieve, failures, suppressions
 * and cancel, with the access rules of spec section 5. Status and completion are derived from
 * the record and the counters kept as messages finish (BroadcastsPort counters, read with the
 * record), never from a scan of messages or events.
 */
import { AppError } from '../domain/errors.js';
import type { TemplateOrigin } from '../domain/template.js';
import type { AddressValue, Principal, Tracking } from '../domain/types.js';
import type { BroadcastCommon } from '../submission/broadcast.js';
import type { BroadcastStatus, BroadcastSummary } from '../domain/wire.js';
import { accessibleChannel } from '../channels/service.js';
import { broadcastCompleted, type BroadcastCounters, type BroadcastRecord, type BroadcastView } from '../store/port/broadcasts.js';
import type { StorePort } from '../store/port/index.js';

export type { BroadcastStatus, BroadcastSummary };
/** The SDKs' four, and `scheduled` (issue 34: an extension, a scheduled broadcast before its time). */
export const BROADCAST_STATUSES: readonly BroadcastStatus[] = ['scheduled', 'accepted', 'processing', 'completed', 'canceled'];

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
  statistics: BroadcastCounters['statistics'];
  /** The stored template and version it was sent with (issue 34), as in message details. */
  template?: TemplateOrigin;
}

export interface Page {
  limit: number;
  offset: number;
}

/**
 * The status of a broadcast, from its record and its counters (read with it: BroadcastView) at
 * `nowMs`. A scheduled broadcast is `scheduled` until its time (its messages may be committed and
 * signed meanwhile: they wait in the queue), unless canceled or already completed (a sandbox
 * channel's messages end at their commit); then the usual statuses. Derived, not stored: the time
 * passing changes it.
 */
export function statusOf(b: BroadcastRecord, counters: BroadcastCounters, nowMs: number): BroadcastStatus {
  if (b.canceledAt) return 'canceled';
  if (broadcastCompleted(b, counters)) return 'completed';
  if (b.scheduledAt !== undefined && Date.parse(b.scheduledAt) > nowMs) return 'scheduled';
  return b.cursor === 0 ? 'accepted' : 'processing';
}

/**
 * Entries handled, in whole percent rounded down ("100%" only when all are): an entry is
 * handled when it became a failure row (build error, all recipients suppressed) or its message
 * left the queue (delivered, bounced, expired, dropped or canceled). Entries a cancel kept from
 * being expanded are not handled.
 */
function completionOf(b: BroadcastRecord, counters: BroadcastCounters): string {
  // Records of an older version count no finished messages: there, expanded is handled.
  const handled = b.failed === undefined ? b.cursor : b.skipped + b.failed + counters.finished;
  return `${b.total === 0 ? 100 : Math.floor((Math.min(handled, b.total) * 100) / b.total)}%`;
}

function summary({ record: b, counters }: BroadcastView<BroadcastCommon>, nowMs: number): BroadcastSummary {
  return {
    id: b.id,
    createdAt: b.createdAt,
    status: statusOf(b, counters, nowMs),
    subject: b.common.template.subject ?? '',
    completion: completionOf(b, counters),
    messages: b.total,
    ...(b.scheduledAt !== undefined && { scheduledAt: b.scheduledAt }),
  };
}

function detail(view: BroadcastView<BroadcastCommon>, nowMs: number): BroadcastDetail {
  const { record: b, counters } = view;
  const c = b.common;
  return {
    ...summary(view, nowMs),
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
    ...(c.templateOrigin && { template: c.templateOrigin }),
  };
}

/** The broadcast, with its counters, if the principal may see it: unknown 404; another account's or channel's 403. */
async function broadcastFor(store: StorePort, p: Principal, id: string): Promise<BroadcastView<BroadcastCommon>> {
  const view = await store.broadcasts.view<BroadcastCommon>(id.toLowerCase());
  const b = view?.record;
  if (!b) throw new AppError('not_found', `Broadcast ${id} does not exist`);
  if (b.accountId !== p.accountId || (p.channelId && p.channelId !== b.channelId)) {
    throw new AppError('forbidden', 'The API key may not access this broadcast');
  }
  // A deleted channel's broadcasts are gone from the 204 on, before the purger reaches them.
  if ((await store.channels.getRecord(b.channelId))?.deletedAt) throw new AppError('not_found', `Broadcast ${id} does not exist`);
  return view;
}

export async function listBroadcasts(
  store: StorePort,
  p: Principal,
  q: Page & { channelId: string; status?: BroadcastStatus; subject?: string },
  nowMs = Date.now(),
): Promise<{ totalCount: number; results: BroadcastSummary[] }> {
  const c = await accessibleChannel(store, p, q.channelId);
  const needle = q.subject?.toLowerCase();
  const page = await store.broadcasts.listOfChannel<BroadcastCommon>({
    channelId: c.id,
    limit: q.limit,
    offset: q.offset,
    match: ({ record: b, counters }) =>
      (!needle || (b.common.template.subject ?? '').toLowerCase().includes(needle)) && (!q.status || statusOf(b, counters, nowMs) === q.status),
  });
  return { totalCount: page.totalCount, results: page.results.map((v) => summary(v, nowMs)) };
}

export async function retrieveBroadcast(store: StorePort, p: Principal, id: string, nowMs = Date.now()): Promise<BroadcastDetail> {
  return detail(await broadcastFor(store, p, id), nowMs);
}

export async function listFailures(store: StorePort, p: Principal, id: string, page: Page) {
  const b = (await broadcastFor(store, p, id)).record;
  const { totalCount, results } = await store.broadcasts.failures(b.id, page);
  return {
    totalCount,
    results: results.map((f) => ({ recipients: { to: f.to, cc: f.cc, bcc: f.bcc }, messageIndex: f.index, errorCode: f.code, errorMessage: f.message })),
  };
}

export async function listSuppressed(store: StorePort, p: Principal, id: string, page: Page): Promise<{ totalCount: number; results: string[] }> {
  const b = (await broadcastFor(store, p, id)).record;
  return store.broadcasts.suppressions(b.id, page);
}

/**
 * Cancels (idempotent on a canceled broadcast); a completed one is 409 conflict. A scheduled one
 * too, before or after its time: its messages not yet attempted end canceled, its entries not yet
 * expanded are never expanded (BroadcastsPort.cancel).
 */
export async function cancel(store: StorePort, p: Principal, id: string, now = new Date()): Promise<BroadcastDetail> {
  const b = (await broadcastFor(store, p, id)).record;
  const r = await store.broadcasts.cancel(b.id, now);
  if (r.status === 'completed') throw new AppError('conflict', `Broadcast ${b.id} is completed; there is nothing left to cancel`);
  if (r.status !== 'canceled') throw new AppError('not_found', `Broadcast ${id} does not exist`);
  return detail({ record: r.record as Record_, counters: await store.broadcasts.counters(b.id) }, now.getTime());
}
