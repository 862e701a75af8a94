/**
 * The statistics counters (spec 2.9, 4.15) and which counter an event adds to: one rule for the
 * store's pre-aggregated counters (every engine counts the same way) and for the per-message
 * statistics of message details (activity/queries.ts).
 *
 * Every counter is a number of recipients:
 *   sent         recipients of `processed` events
 *   delivered, bounced
 *                recipients with that final outcome; one recipient counts in one of them only
 *   opened, clicked, complained, unsubscribed
 *                recipients of events of that type (every open and click, not unique ones)
 * `accepted` and `resubscribed` events are not counted.
 */
import type { EventRecord, EventType } from './types.js';
import type { StatCounters, StatTotals } from './wire.js';

export type { StatCounters, StatTotals };

export const DAY_MS = 86_400_000;

const COUNTER_OF: Partial<Record<EventType, keyof StatCounters>> = {
  processed: 'sent',
  delivered: 'delivered',
  bounced: 'bounced',
  opened: 'opened',
  clicked: 'clicked',
  complained: 'complained',
  unsubscribed: 'unsubscribed',
};

export function zeroCounters(): StatCounters {
  return { sent: 0, delivered: 0, opened: 0, clicked: 0, bounced: 0, unsubscribed: 0, complained: 0 };
}

/** The counter an event adds to, and by how much (null: not counted). */
export function counterOf(e: Pick<EventRecord, 'eventType' | 'recipients'>): { name: keyof StatCounters; by: number } | null {
  const name = COUNTER_OF[e.eventType];
  return name && e.recipients.length > 0 ? { name, by: e.recipients.length } : null;
}

/** Statistics series buckets: a quarter hour, the largest unit every zone's day boundary falls on. */
export const QUARTER_MS = 900_000;

/** The quarter hour of an instant (quarters since 1970-01-01 00:00 UTC). */
export function quarterOf(ms: number): number {
  return Math.floor(ms / QUARTER_MS);
}

/** The UTC day of an instant (days since 1970-01-01): totals count whole UTC days. */
export function utcDay(ms: number): number {
  return Math.floor(ms / DAY_MS);
}
