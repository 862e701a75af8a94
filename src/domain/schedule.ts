/**
 * Scheduled sends (issue 34): `scheduledAt` is an RFC 3339 date-time with its offset (RFC 3339
 * 5.6: `Z` or `+01:00`; a local time without an offset would be ambiguous across servers). The
 * message is committed at once and its delivery jobs are due at that time, never before: a leap
 * second (23:59:60 UTC, RFC 3339 5.7) is due at the next day's 00:00:00 (domain/date-time.ts).
 */
import { parseDateTime } from './date-time.js';
import type { FieldErrorList } from './errors.js';

/** A time a minute old is still taken (the caller's clock, the request's time on the wire); older is refused. */
export const SCHEDULE_PAST_TOLERANCE_MS = 60_000;
const DAY_MS = 86_400_000;

/**
 * Checks a request's `scheduledAt` and returns its instant in ms (undefined when absent or
 * wrong, each problem added to `errors` at `pointer`). Field codes: `invalid_format` (not RFC
 * 3339 with an offset), `in_past` (more than a minute ago), `too_far` (beyond maxDays).
 */
export function checkScheduledAt(value: string | undefined, o: { nowMs: number; maxDays: number; pointer: string }, errors: FieldErrorList): number | undefined {
  if (value === undefined) return undefined;
  const ms = parseDateTime(value, 'next-second');
  if (ms === undefined) {
    errors.add(o.pointer, 'invalid_format', 'must be an RFC 3339 date-time with an offset, e.g. 2026-12-06T09:00:00+01:00');
    return undefined;
  }
  if (ms < o.nowMs - SCHEDULE_PAST_TOLERANCE_MS) {
    errors.add(o.pointer, 'in_past', 'must not be more than a minute in the past');
    return undefined;
  }
  if (ms > o.nowMs + o.maxDays * DAY_MS) {
    errors.add(o.pointer, 'too_far', `must be at most ${o.maxDays} days ahead`);
    return undefined;
  }
  return ms;
}

/** When a message's jobs are first due: its scheduled time, or the commit time when that is later (or none was asked). */
export function firstDueMs(scheduledAt: string | undefined, nowMs: number): number {
  return scheduledAt === undefined ? nowMs : Math.max(nowMs, Date.parse(scheduledAt));
}

/** A message as the activity API shows it (domain/wire.ts MessageStatus). */
export type ShownStatus = 'scheduled' | 'queued' | 'sent' | 'canceled';

/**
 * `scheduled` while a scheduled send waits for its time, `canceled` once a cancel ended it,
 * otherwise the record's own status. Derived, not stored: the time passing changes it.
 */
export function shownStatus(m: { status: 'queued' | 'sent'; scheduledAt?: string; canceledAt?: string }, nowMs: number): ShownStatus {
  if (m.canceledAt !== undefined) return 'canceled';
  if (m.status === 'queued' && m.scheduledAt !== undefined && Date.parse(m.scheduledAt) > nowMs) return 'scheduled';
  return m.status;
}
