/**
 * The activity reads of the API (spec 4.13, 4.14; api-surface activity.listMessages): pages of
 * events and of messages, and one message with its history. Read-only; the pages come from the
 * store port (EventsPort), whose engine keeps the count caches.
 */
import { AppError } from '../domain/errors.js';
import { splitMessage, unfoldedUtf8Value } from '../domain/raw-headers.js';
import { counterOf } from '../domain/stat-counters.js';
import type { DeliveryAttempt, EventRecord, MessageRecord, Principal } from '../domain/types.js';
import { isUuid } from '../domain/uuid.js';
import type { ActivityFilter, ActivityPage, MessageFilter, MessageListItem, MessagePage, PageOptions } from '../store/port/events.js';
import type { StorePort } from '../store/port/index.js';
import type { MessageDetails } from '../domain/wire.js';

/** A message list item, with the delivery type it was sent with. */
export type MessageItem = MessageListItem;

/** Per-recipient counts of a message's events: the `statistics` of its details answer. */
export type MessageStatistics = MessageDetails['statistics'];

/** A message with its history: events, per-recipient counts, the raw body and its header fields, delivery attempts. */
export interface MessageHistory {
  events: EventRecord[];
  statistics: MessageStatistics;
  raw: Buffer | undefined;
  /** The header fields of the stored message, in order; undefined while it has no body yet. */
  headerFields: HeaderFieldValue[] | undefined;
  attempts: Array<DeliveryAttempt & { domain: string }>;
}

export interface HeaderFieldValue {
  name: string;
  /** Unfolded (RFC 5322 2.2.3: each CRLF before white space removed), as on the wire: encoded words (RFC 2047) are not decoded. */
  value: string;
}

/** Bytes of a stored message looked at for its header block, and fields shown at most. */
const HEADER_BLOCK_MAX_BYTES = 256 * 1024;
const HEADER_FIELDS_MAX = 500;

export class ActivityReads {
  constructor(private readonly store: StorePort) {}

  eventPage(filter: ActivityFilter, opts: PageOptions): Promise<ActivityPage> {
    return this.store.events.page(filter, opts);
  }

  messagePage(filter: MessageFilter, opts: PageOptions): Promise<MessagePage> {
    return this.store.events.messagePage(filter, opts);
  }

  /**
   * Checks that a message id named in a filter is the principal's (403 otherwise). An id that
   * names nothing (yet, or any more) passes: the filter then matches nothing.
   */
  async checkMessageFilter(p: Principal, id: string): Promise<void> {
    const owner = await this.store.events.ownerOfMessage(id);
    if (owner) checkMessageScope(p, owner);
  }

  /** The message a request names, if the principal may see it (visibleMessage below). */
  visibleMessage(p: Principal, id: string): Promise<MessageRecord> {
    return visibleMessage(this.store, p, id);
  }

  async history(m: MessageRecord): Promise<MessageHistory> {
    // All asked at once: an engine that reads synchronously (LMDB) answers them from one
    // snapshot, as when this was one synchronous function.
    const [events, jobs, raw] = await Promise.all([this.store.events.ofMessage(m.id), this.store.queue.jobsOfMessage(m.id), this.store.messages.body(m.id)]);
    const attempts = jobs
      // A job's recipients shrink as some are delivered, so an attempt names its domain only.
      .flatMap((job) => job.history.map((a) => ({ domain: job.domain, ...a })))
      .sort((a, b) => a.at.localeCompare(b.at));
    return { events, statistics: countRecipients(events), raw, headerFields: raw ? headerFieldsOf(raw) : undefined, attempts };
  }
}

/**
 * The header block of a stored message as name/value pairs. The block is read from the first
 * HEADER_BLOCK_MAX_BYTES only, so a submitted message without a blank line costs no more than
 * that; header bytes are UTF-8 where they are not ASCII (RFC 6532).
 */
export function headerFieldsOf(raw: Buffer): HeaderFieldValue[] {
  const { fields } = splitMessage(raw.subarray(0, HEADER_BLOCK_MAX_BYTES));
  return fields.slice(0, HEADER_FIELDS_MAX).map((f) => ({ name: f.name, value: unfoldedUtf8Value(f).trim() }));
}

/**
 * The message a request names, if the principal may see it: unknown 404, another account's or
 * channel's 403; a deleted channel's messages are gone from its 204 on, even before the purger
 * reaches them (404). Also the queue's (queue/account-queue.ts).
 */
export async function visibleMessage(store: StorePort, p: Principal, id: string): Promise<MessageRecord> {
  const m = isUuid(id) ? await store.messages.get(id.toLowerCase()) : undefined;
  if (!m) throw new AppError('not_found', `Message ${id} does not exist`);
  checkMessageScope(p, m);
  if ((await store.channels.getRecord(m.channelId))?.deletedAt) throw new AppError('not_found', `Message ${id} does not exist`);
  return m;
}

function checkMessageScope(p: Principal, owner: { accountId: string; channelId: string }): void {
  if (owner.accountId !== p.accountId || (p.channelId && p.channelId !== owner.channelId)) {
    throw new AppError('forbidden', 'The API key may not access this message');
  }
}

/**
 * The counting rule of the statistics counters (domain/stat-counters.ts, store/port/events.ts): a recipient is delivered or bounced, never both; a
 * bounce after the delivery moves it, a repeated bounce counts once.
 */
function countRecipients(events: EventRecord[]): MessageStatistics {
  const statistics: MessageStatistics = { delivered: 0, bounced: 0, opened: 0, clicked: 0, complained: 0, unsubscribed: 0 };
  const outcome = new Map<string, 'delivered' | 'bounced'>();
  for (const e of events) {
    const c = counterOf(e);
    if (!c || !(c.name in statistics)) continue;
    if (e.eventType !== 'bounced') {
      statistics[c.name as keyof MessageStatistics] += c.by;
      if (e.eventType === 'delivered') for (const r of e.recipients) if (!outcome.has(r.toLowerCase())) outcome.set(r.toLowerCase(), 'delivered');
      continue;
    }
    for (const r of new Set(e.recipients.map((x) => x.toLowerCase()))) {
      if (outcome.get(r) === 'bounced') continue;
      if (outcome.get(r) === 'delivered') statistics.delivered--;
      outcome.set(r, 'bounced');
      statistics.bounced++;
    }
  }
  return statistics;
}
