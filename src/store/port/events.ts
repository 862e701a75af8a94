/**
 * The event log and the reads over it (activity pages and counts, the message list, a message's
 * events) and the statistics counters.
 *
 * Part of the store port (store/port/index.ts): asynchronous verbs that take and return plain
 * data; what must commit together is one verb. Implemented by the LMDB engine in
 * store/lmdb/repos/ and checked by the contract suite in test/store-contract/.
 *
 * There is no append verb: an event is appended by the verb whose change it records (a commit,
 * an outcome, an engagement), in the same commit, together with its statistics counters and its
 * webhook outbox entries. These ports only read.
 *
 * ## The `after` cursor (what every engine must guarantee)
 *
 * Every event has a `seq`, unique and increasing in the order events are appended; a page is
 * "the matches with seq > after" (oldest first) or "seq < after" (newest first), and a client
 * pages the log as it grows by passing back the `after` of its last page. That is gap-free only
 * if the seqs a reader can see form a prefix: **a reader must never see seq n while an event with
 * a lower seq can still commit later** (otherwise a client that passed n never sees it). LMDB has
 * one writer, so seqs commit in order and every snapshot holds a contiguous run
 * [floor, last]. An engine with concurrent writers (PostgreSQL, where a sequence hands out
 * numbers before their transactions commit, in any order) must make a reader stop below the
 * lowest seq still in flight: e.g. give out seqs under one lock per commit, or have readers
 * read only up to a "visible up to" watermark advanced past committed seqs only. The same
 * guarantee lets the engine cache counts per filter and extend them with the events appended
 * since (the LMDB engine's count cache): the events below a seen `last` never change except
 * through retention, which only moves the floor up.
 *
 * Ownership: every filter carries an accountId, and a verb returns only that account's events
 * (tenant isolation); a channel or message named in a filter has been checked by the caller.
 */
import type { DeliveryType, EventRecord, EventType, MailType, MessageRecord } from '../../domain/types.js';
import type { StatCounters, StatTotals } from '../../domain/stat-counters.js';
import type { StatChanges } from '../../domain/stat-changes.js';

export type { StatCounters, StatTotals };

/** The filters of GET /activity/events (spec 4.13); every set field must match. */
export interface ActivityFilter {
  accountId: string;
  /** Checked by the caller: belongs to the account (and to a channel key's channel). */
  channelId?: string;
  /** Checked by the caller: its events belong to the account (and channel). */
  messageId?: string;
  /** Exact address, any case. */
  recipient?: string;
  /** Case-insensitive substring. */
  subject?: string;
  /** Events carrying any of these tags. */
  tags?: string[];
  mailType?: MailType;
  /** Events of any of these types. */
  eventTypes?: EventType[];
  /**
   * Inclusive bounds on the event timestamp. An event stamped more than a few minutes earlier
   * than the newest event already appended (LATE_EVENT_TOLERANCE_MS in the LMDB engine) may be
   * missed by an endDate filter; it is always listed without time filters.
   */
  startMs?: number;
  endMs?: number;
  /**
   * Message list only (eventTypes ['accepted']): only messages still queued (a recipient waits
   * for a final outcome) or no longer queued.
   */
  messageStatus?: 'queued' | 'sent';
}

/** A page's place and size. */
export interface PageOptions {
  /** The cursor: 0 from the start (the newest for 'desc'), else the `after` of the last page. */
  afterSeq: number;
  limit: number;
  /** 'asc' (default): seq > afterSeq, oldest first; 'desc': seq < afterSeq, newest first. */
  order?: 'asc' | 'desc';
}

export interface ActivityPage {
  results: EventRecord[];
  /** Continue strictly after this seq (in the page's order); the cursor passed in when nothing matched. */
  after: number;
  /**
   * The engine's work budget for one page ran out before `limit` matches: more may follow even
   * if results < limit, and `after` is where the walk stopped (no match is skipped).
   */
  partial: boolean;
  /** Every match of the filter, whatever the cursor. */
  totalCount: number;
  /** False when the count's budget ran out and totalCount is extrapolated. */
  totalCountExact: boolean;
}

/** GET /activity/messages: the event filters without messageId and eventTypes. */
export type MessageFilter = Omit<ActivityFilter, 'eventTypes' | 'messageId'>;

/** A message of the list: its `accepted` event (which carries its list fields) and its record. */
export interface MessageListItem {
  accepted: EventRecord;
  /** Undefined once retention removed the record while its accepted event was still kept. */
  message?: MessageRecord;
  /** The record's delivery type; once the record is gone, its channel's (live when that is gone too). */
  deliveryType: DeliveryType;
}

export type MessagePage = Omit<ActivityPage, 'results'> & { results: MessageListItem[] };

/** The account and channel a message belongs to. */
export interface MessageOwner {
  accountId: string;
  channelId: string;
}

export interface EventsPort {
  /**
   * One page of the account's events matching `filter`, past the cursor in the page's order, at
   * most `limit`, with the total count of matches. The page and its count are read from one
   * snapshot. A page's cost is bounded (see `partial`), whatever the size of the log.
   */
  page(filter: ActivityFilter, opts: PageOptions): Promise<ActivityPage>;

  /**
   * The message list: `page` over the `accepted` events (one per message; `after` is that
   * event's seq), each with its message record and delivery type, read from one snapshot.
   * totalCount with a status counts the messages with that status now.
   */
  messagePage(filter: MessageFilter, opts: PageOptions): Promise<MessagePage>;

  /** Every remaining event of one message, in seq order ([] for an unknown id). */
  ofMessage(messageId: string): Promise<EventRecord[]>;

  /**
   * Who a message belongs to: from its record, or from its events once retention removed the
   * record; undefined when neither is left (for access checks on a message id in a filter).
   */
  ownerOfMessage(messageId: string): Promise<MessageOwner | undefined>;

  /**
   * The seqs the log holds: every event still kept has floor <= seq <= last (last: the highest
   * seq given out, 0 before the first; floor moves up as retention removes the oldest events).
   */
  bounds(): Promise<{ floor: number; last: number }>;
}

/** Which counters: an account's, optionally some channels and tags. */
export interface CounterScope {
  accountId: string;
  /** Only these channels; undefined: every channel of the account. */
  channelIds?: string[];
  /** Only events carrying at least one of these tags (an event with several counts once). */
  tags?: string[];
}

export interface TotalsQuery extends CounterScope {
  /** Inclusive range of UTC days (domain/stat-counters.ts utcDay): whole days count. */
  fromDay: number;
  toDay: number;
}

export interface SeriesQuery extends CounterScope {
  /**
   * Bucket edges in milliseconds, ascending: bucket i is [edgesMs[i], edgesMs[i + 1]). Edges are
   * rounded down to a quarter hour (every current zone offset is a whole number of them).
   */
  edgesMs: number[];
}

/**
 * The statistics counters, kept by the engine as events are appended (same commit), so a read
 * never walks events: its cost grows with the buckets and channels it covers. The counting rule
 * is domain/stat-counters.ts's; a recipient bounced after it was delivered moves from delivered
 * (in the delivery's buckets) to bounced (in the bounce's), a second bounce does not count.
 * Counters outlive event retention; a deleted channel's counters stop counting at its delete.
 */
export interface StatisticsPort {
  /** The sums over UTC days [fromDay, toDay], per mail type. */
  totals(q: TotalsQuery): Promise<StatTotals>;

  /** One sum per bucket (zeros included), buckets of any length on quarter-hour edges (hourly series). */
  series(q: SeriesQuery): Promise<StatTotals[]>;

  /**
   * As `series`, for buckets at least a day long (calendar days of a zone): the engine may read
   * its day counters plus the quarter hours near each edge. Counters older than the quarter-hour
   * counters count on their UTC day here and nowhere in `series`.
   */
  daySeries(q: SeriesQuery): Promise<StatTotals[]>;

  /**
   * The account's change marks (domain/stat-changes.ts): moved on, in the same commit, by every
   * write that adds to a quarter hour earlier than the writer's current one, and by a channel's
   * delete. A reader that keeps the sums of buckets that ended reads these first.
   */
  changes(accountId: string): Promise<StatChanges>;
}
