/**
 * The activity reads of the API (spec 4.13, 4.14; api-surface activity.listMessages): pages of
 * events and of messages, and one message with its history. Read-only; one instance per HTTP
 * server, as the page queries keep a cache of counts.
 */
import { AppError } from '../domain/errors.js';
import { splitMessage, unfoldedUtf8Value } from '../domain/raw-headers.js';
import type { DeliveryAttempt, DeliveryType, EventRecord, MessageRecord, Principal } from '../domain/types.js';
import { isUuid } from '../domain/uuid.js';
import { ActivityQueries, type ActivityFilter, type ActivityPage, type PageOptions } from '../store/lmdb/activity-query.js';
import { getChannelRecord } from '../store/lmdb/channels.js';
import type { LmdbStore } from '../store/lmdb/engine.js';
import { accountOfMessageEvents, eventsOfMessage } from '../store/lmdb/events.js';
import { jobsOfMessage } from '../store/lmdb/message-jobs.js';
import { MessageQueries, type MessageFilter, type MessageListItem } from '../store/lmdb/message-query.js';
import { getBody, getMessage } from '../store/lmdb/messages.js';
import { counterOf } from '../store/lmdb/stats.js';
import type { MessageDetails } from '../domain/wire.js';

/** A message list item with the delivery type it was sent with. */
export type MessageItem = MessageListItem & { deliveryType: DeliveryType };

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
  private readonly events: ActivityQueries;
  private readonly messages: MessageQueries;

  constructor(private readonly store: LmdbStore) {
    this.events = new ActivityQueries(store);
    this.messages = new MessageQueries(store);
  }

  eventPage(filter: ActivityFilter, opts: PageOptions): ActivityPage {
    return this.events.page(filter, opts);
  }

  messagePage(filter: MessageFilter, opts: PageOptions): Omit<ActivityPage, 'results'> & { results: MessageItem[] } {
    const page = this.messages.page(filter, opts);
    // A record already removed by retention belonged to a finished message.
    const results = page.results.map((item) => ({
      ...item,
      deliveryType: item.message?.deliveryType ?? getChannelRecord(this.store, item.accepted.channelId)?.deliveryType ?? 'live',
    }));
    return { ...page, results };
  }

  /**
   * Checks that a message id named in a filter is the principal's (403 otherwise). An id that
   * names nothing (yet, or any more) passes: the filter then matches nothing.
   */
  checkMessageFilter(p: Principal, id: string): void {
    const m = getMessage(this.store, id);
    const owner = m ? { accountId: m.accountId, channelId: m.channelId } : accountOfMessageEvents(this.store, id);
    if (owner) checkMessageScope(p, owner);
  }

  /** The message a request names, if the principal may see it (visibleMessage below). */
  visibleMessage(p: Principal, id: string): MessageRecord {
    return visibleMessage(this.store, p, id);
  }

  history(m: MessageRecord): MessageHistory {
    const events = eventsOfMessage(this.store, m.id);
    const attempts = jobsOfMessage(this.store, m.id)
      // A job's recipients shrink as some are delivered, so an attempt names its domain only.
      .flatMap((job) => job.history.map((a) => ({ domain: job.domain, ...a })))
      .sort((a, b) => a.at.localeCompare(b.at));
    const raw = getBody(this.store, m.id);
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
export function visibleMessage(store: LmdbStore, p: Principal, id: string): MessageRecord {
  const m = isUuid(id) ? getMessage(store, id.toLowerCase()) : undefined;
  if (!m) throw new AppError('not_found', `Message ${id} does not exist`);
  checkMessageScope(p, m);
  if (getChannelRecord(store, m.channelId)?.deletedAt) throw new AppError('not_found', `Message ${id} does not exist`);
  return m;
}

function checkMessageScope(p: Principal, owner: { accountId: string; channelId: string }): void {
  if (owner.accountId !== p.accountId || (p.channelId && p.channelId !== owner.channelId)) {
    throw new AppError('forbidden', 'The API key may not access this message');
  }
}

/**
 * The counting rule of store/stats.ts: a recipient is delivered or bounced, never both; a
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
