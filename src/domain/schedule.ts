/**
 * Scheduled sends (issue 34): `scheduledAt` is an RFC 3339 date-time with its offset (RFC 3339
 * 5.6: `Z` or `+01:00`; a local time without an offset would be ambiguous across servers). The
 * message is committed at once and its delivery jobs are due at that time, never before.
 */
import type { FieldErrorList } from './errors.js';

/** A time a minute old is still taken (the caller's clock, the request's time on the wire); older is refused. */
export const SCHEDULE_PAST_TOLERANCE_MS = 60_000;
const DAY_MS = 86_400_000;

/** RFC 3339 5.6 date-time, offset required; fractions of a second allowed (kept to the millisecond). */
const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/;

/** The instant an RFC 3339 date-time with offset names, or undefined when it is not one (month 13, February 30...). */
export function parseRfc3339(text: string): number | undefined {
  const m = RFC3339.exec(text);
  if (!m) return undefined;
  const ms = Date.parse(text.toUpperCase());
  if (Number.isNaN(ms)) return undefined;
  // Date.parse rolls 2026-02-30 over to March: the calendar fields must read back the same (in UTC at the same offset).
  const [, y, mo, d] = m;
  const offsetMs = m[8].toUpperCase() === 'Z' ? 0 : offsetOf(m[8]);
  const local = new Date(ms + offsetMs);
  if (local.getUTCFullYear() !== Number(y) || local.getUTCMonth() + 1 !== Number(mo) || local.getUTCDate() !== Number(d)) return undefined;
  return ms;
}

function offsetOf(text: string): number {
  const sign = text.startsWith('-') ? -1 : 1;
  return sign * (Number(text.slice(1, 3)) * 60 + Number(text.slice(4, 6))) * 60_000;
}

/**
 * Checks a request's `scheduledAt` and returns its instant in ms (undefined when absent or
 * wrong, each problem added to `errors` at `pointer`). Field codes: `invalid_format` (not RFC
 * 3339 with an offset), `in_past` (more than a minute ago), `too_far` (beyond maxDays).
 */
export function checkScheduledAt(value: string | undefined, o: { nowMs: number; maxDays: number; pointer: string }, errors: FieldErrorList): number | undefined {
  if (value === undefined) return undefined;
  const ms = parseRfc3339(value);
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
