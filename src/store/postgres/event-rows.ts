/**
 * The rows appendEvents writes for events, derived from the records alone, so that the writer
 * and the removers (retention, the channel purge) can never disagree about them: the events
 * row (filter columns beside the record), its event_terms rows (recipients lower-cased and
 * tags, each once) and the event clock's raises.
 *
 * Lower-casing is JavaScript's (String.prototype.toLowerCase), as the LMDB engine and the
 * filter's own value: PostgreSQL's lower() depends on the database's locale.
 */
import type { EventRecord } from '../../domain/types.js';

/** An event as a caller hands it over: everything but the seq, which appendEvents gives. */
export type EventDraft = Omit<EventRecord, 'seq'>;

export interface EventRow {
  seq: number;
  account_id: string;
  channel_id: string;
  message_id: string;
  mail_type: string;
  event_type: string;
  ts_ms: number;
  subject_lc: string;
  recipients: string[];
  tags: string[];
  doc: EventRecord;
}

/** Milliseconds of an event timestamp; a malformed one is a programming error, never stored. */
export function eventTimeMs(e: Pick<EventRecord, 'timestamp'>): number {
  const ms = Date.parse(e.timestamp);
  if (!Number.isFinite(ms)) throw new Error(`event timestamp is not a date-time: ${String(e.timestamp)}`);
  return ms;
}

export function lowerDistinct(values: readonly string[]): string[] {
  return [...new Set(values.map((v) => v.toLowerCase()))];
}

/** The rows of the drafts; seq and doc are filled in once the seqs are known. */
export function eventRows(drafts: readonly EventDraft[]): EventRow[] {
  return drafts.map((d) => ({
    seq: 0,
    account_id: d.accountId,
    channel_id: d.channelId,
    message_id: d.messageId,
    mail_type: d.mailType,
    event_type: d.eventType,
    ts_ms: eventTimeMs(d),
    subject_lc: d.subject.toLowerCase(),
    recipients: lowerDistinct(d.recipients),
    tags: [...new Set(d.tags)],
    doc: { seq: 0, ...d },
  }));
}

/** event_terms rows as parallel arrays (one unnest): 'r' per distinct recipient, 't' per distinct tag. */
export function termRows(rows: readonly EventRow[]): { account: string[]; kind: string[]; value: string[]; seq: number[]; channel: string[] } {
  const out = { account: [] as string[], kind: [] as string[], value: [] as string[], seq: [] as number[], channel: [] as string[] };
  const push = (r: EventRow, kind: string, value: string) => {
    out.account.push(r.account_id);
    out.kind.push(kind);
    out.value.push(value);
    out.seq.push(r.seq);
    out.channel.push(r.channel_id);
  };
  for (const r of rows) {
    for (const v of r.recipients) push(r, 'r', v);
    for (const t of r.tags) push(r, 't', t);
  }
  return out;
}

/**
 * The events that raise the event clock (the running maximum of timestamps), given the clock
 * before them: each becomes an event_clock row [ms, seq].
 */
export function clockRaises(rows: readonly EventRow[], clockBefore: number | null): { ms: number; seq: number }[] {
  const out: { ms: number; seq: number }[] = [];
  let clock = clockBefore;
  for (const r of rows) {
    if (clock === null || r.ts_ms > clock) {
      clock = r.ts_ms;
      out.push({ ms: r.ts_ms, seq: r.seq });
    }
  }
  return out;
}
