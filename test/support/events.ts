/**
 * Test fixtures for the event log: deterministic synthetic events, the events a test knows it
 * made (EventLedger, read back through the store port), and brute-force filters and counters
 * over them to compare the store's answers with. Writing synthetic events, and reading the whole
 * log back, is engine-specific (support/engine-fixtures.ts, seedEvents and allEvents): the port
 * has no append verb.
 */
import { randomUUID } from 'node:crypto';
import { EVENT_TYPES, type EventRecord, type EventType, type MailType } from '../../src/domain/types.js';
import type { StorePort } from '../../src/store/port/index.js';
import { seedEvents, type EventDraft } from './engine-fixtures.js';
import { rng } from './random.js';

export { rng };

export const RECIPIENTS = ['ann@example.net', 'bob@example.org', 'cy@example.com', 'dee@example.net', 'eve@example.org'];
export const TAGS = ['welcome', 'billing', 'news', 'promo'];
export const SUBJECTS = ['Welcome aboard', 'Your invoice', 'Weekly NEWS', 'Reset password'];

export interface GenerateOptions {
  accountId: string;
  channelIds: string[];
  count: number;
  /** Timestamps run evenly from startMs to endMs. */
  startMs: number;
  endMs: number;
  seed: number;
  /** Share of events stamped up to lateMaxMs earlier than their place in the run (late events). */
  lateShare?: number;
  lateMaxMs?: number;
  messages?: number;
}

/** `count` synthetic events of a few messages (not stored): the same options, the same events but their message ids. */
export function eventDrafts(o: GenerateOptions): EventDraft[] {
  const rand = rng(o.seed);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)];
  const messageIds = Array.from({ length: o.messages ?? 40 }, () => randomUUID());
  const messages = new Map<string, { channelId: string; mailType: MailType; subject: string; tags: string[] }>();
  const drafts: EventDraft[] = [];
  for (let i = 0; i < o.count; i++) {
    const messageId = pick(messageIds);
    let m = messages.get(messageId);
    if (!m) {
      const tags = TAGS.filter(() => rand() < 0.3);
      m = { channelId: pick(o.channelIds), mailType: rand() < 0.6 ? 'transactional' : 'broadcast', subject: pick(SUBJECTS), tags };
      messages.set(messageId, m);
    }
    let ms = Math.round(o.startMs + ((o.endMs - o.startMs) * i) / Math.max(1, o.count - 1));
    if (rand() < (o.lateShare ?? 0)) ms -= Math.floor(rand() * (o.lateMaxMs ?? 180_000));
    const recipients = RECIPIENTS.filter(() => rand() < 0.35);
    drafts.push({
      accountId: o.accountId,
      channelId: m.channelId,
      messageId,
      mailType: m.mailType,
      mailSource: rand() < 0.8 ? 'api' : 'smtp',
      eventType: pick(EVENT_TYPES) as EventType,
      timestamp: new Date(ms).toISOString(),
      subject: m.subject,
      recipients: recipients.length > 0 ? recipients : [pick(RECIPIENTS)],
      tags: m.tags,
      metadata: { n: String(i) },
      details: {},
    });
  }
  return drafts;
}

/** Writes `count` events into the store's log in writes of 200 and returns them as stored (with seqs). */
export async function generateEvents(store: StorePort, o: GenerateOptions): Promise<EventRecord[]> {
  return seedEvents(store, eventDrafts(o));
}

/**
 * The events a test made, as an oracle that does not read the indexes under test: the synthetic
 * events it wrote (as stored, with their seqs) and the events of the messages it sent through
 * the API, read back with EventsPort.ofMessage when asked (outcomes arrive after the 200).
 */
export class EventLedger {
  private readonly written: EventRecord[] = [];
  private readonly sentIds = new Set<string>();

  constructor(private readonly store: StorePort) {}

  /** Synthetic events as stored; returns them. */
  add(events: EventRecord[]): EventRecord[] {
    this.written.push(...events);
    return events;
  }

  /** A message sent through the API; returns its id. */
  sent(messageId: string): string {
    this.sentIds.add(messageId);
    return messageId;
  }

  /** Every event known, in seq order. */
  async all(): Promise<EventRecord[]> {
    const bySeq = new Map<number, EventRecord>(this.written.map((e) => [e.seq, e]));
    for (const id of this.sentIds) for (const e of await this.store.events.ofMessage(id)) bySeq.set(e.seq, e);
    return [...bySeq.values()].sort((a, b) => a.seq - b.seq);
  }
}

/** The API's query parameters, as strings. */
export type EventsQuery = Partial<Record<'channelId' | 'messageId' | 'recipient' | 'subject' | 'tags' | 'mailType' | 'eventTypes' | 'startDate' | 'endDate', string>>;

/** What GET /activity/events must return for an account, computed the slow, obvious way. */
export function bruteForceEvents(events: EventRecord[], accountId: string, q: EventsQuery, channelOfKey?: string): EventRecord[] {
  const tags = q.tags?.split(',');
  const types = q.eventTypes?.split(',');
  const start = q.startDate ? Date.parse(q.startDate) : -Infinity;
  const end = q.endDate ? Date.parse(q.endDate) : Infinity;
  return events.filter((e) => {
    const ts = Date.parse(e.timestamp);
    return (
      e.accountId === accountId &&
      (!channelOfKey || e.channelId === channelOfKey) &&
      (!q.channelId || e.channelId === q.channelId) &&
      (!q.messageId || e.messageId === q.messageId) &&
      (!q.recipient || e.recipients.some((r) => r.toLowerCase() === q.recipient!.toLowerCase())) &&
      (!q.subject || e.subject.toLowerCase().includes(q.subject.toLowerCase())) &&
      (!tags || e.tags.some((t) => tags.includes(t))) &&
      (!q.mailType || e.mailType === q.mailType) &&
      (!types || types.includes(e.eventType)) &&
      ts >= start &&
      ts <= end
    );
  });
}

/** The list item of spec 2.7. */
export function asItem(e: EventRecord) {
  return {
    messageId: e.messageId,
    channelId: e.channelId,
    mailType: e.mailType,
    eventType: e.eventType,
    timestamp: e.timestamp,
    subject: e.subject,
    recipients: e.recipients,
    mailSource: e.mailSource,
    tags: e.tags,
    metadata: e.metadata,
    details: e.details,
  };
}

/** One change to one statistics counter, as the counting rule (store/stats.ts) makes it. */
export interface CounterDelta {
  event: EventRecord;
  timeMs: number;
  counter: 'sent' | 'delivered' | 'opened' | 'clicked' | 'bounced' | 'unsubscribed' | 'complained';
  by: number;
}

const COUNTER_OF_EVENT: Partial<Record<EventType, CounterDelta['counter']>> = {
  processed: 'sent', delivered: 'delivered', bounced: 'bounced', opened: 'opened', clicked: 'clicked', complained: 'complained', unsubscribed: 'unsubscribed',
};

/**
 * The counter changes of the stored events, the slow way: one per recipient, in seq order. A
 * bounce of a recipient delivered before moves it (delivered −1 at the delivery's time); a
 * bounce of a recipient bounced before does not count.
 */
export function counterDeltas(events: EventRecord[]): CounterDelta[] {
  const out: CounterDelta[] = [];
  const outcome = new Map<string, { kind: 'delivered' | 'bounced'; event: EventRecord }>();
  for (const e of [...events].sort((a, b) => a.seq - b.seq)) {
    const counter = COUNTER_OF_EVENT[e.eventType];
    if (!counter) continue;
    const timeMs = Date.parse(e.timestamp);
    for (const r of new Set(e.recipients.map((x) => x.toLowerCase()))) {
      const key = `${e.messageId} ${r}`;
      const before = outcome.get(key);
      if (counter === 'delivered' && !before) outcome.set(key, { kind: 'delivered', event: e });
      if (counter === 'bounced') {
        if (before?.kind === 'bounced') continue;
        if (before) out.push({ event: before.event, timeMs: Date.parse(before.event.timestamp), counter: 'delivered', by: -1 });
        outcome.set(key, { kind: 'bounced', event: e });
      }
      out.push({ event: e, timeMs, counter, by: 1 });
    }
  }
  return out;
}
