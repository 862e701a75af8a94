/**
 * Key layouts of the event indexes (see layout.ts: `eventIndex`, `eventClock`). Both the writer
 * (appendEventInTxn) and the remover (retention) derive an event's index keys from the event
 * itself through indexKeysOf, so the two can never disagree.
 */
import type { EventRecord } from '../../domain/types.js';

/** a: account, c: channel, r: recipient, t: tag, m: mail type, e: event type. */
export type IndexKind = 'a' | 'c' | 'r' | 't' | 'm' | 'e';

/** [accountId, kind, value]: one index; entries are this prefix plus the seq. */
export type IndexPrefix = [string, IndexKind, string];
export type IndexKey = [string, IndexKind, string, number];

export function indexPrefix(accountId: string, kind: IndexKind, value = ''): IndexPrefix {
  return [accountId, kind, value];
}

/** Every eventIndex key of one event (recipients lowercased, duplicates removed). */
export function indexKeysOf(e: EventRecord): IndexKey[] {
  const a = e.accountId;
  const keys: IndexKey[] = [
    [a, 'a', '', e.seq],
    [a, 'c', e.channelId, e.seq],
    [a, 'm', e.mailType, e.seq],
    [a, 'e', e.eventType, e.seq],
  ];
  for (const r of new Set(e.recipients.map((x) => x.toLowerCase()))) keys.push([a, 'r', r, e.seq]);
  for (const t of new Set(e.tags)) keys.push([a, 't', t, e.seq]);
  return keys;
}

/** Milliseconds of an event timestamp; a malformed one is a programming error, never stored. */
export function eventTimeMs(e: Pick<EventRecord, 'timestamp'>): number {
  const ms = Date.parse(e.timestamp);
  if (!Number.isFinite(ms)) throw new Error(`event timestamp is not a date-time: ${String(e.timestamp)}`);
  return ms;
}
