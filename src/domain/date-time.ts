/**
 * The one reader of the API's date-time inputs (a send's and a broadcast's `scheduledAt`, PATCH
 * /activity/messages/{id}, the activity, inbound and statistics query ranges): an RFC 3339 5.6
 * date-time with its offset, read to the millisecond. It takes what the query schemas' `date-time`
 * format (ajv-formats) takes, so a value the schema passed always has an instant: a space for the
 * `T` (RFC 3339 5.6 NOTE), `t` and `z` in lower case, the offset also as `+0100` or `+01`.
 *
 * Date.parse is not enough: it has no leap second (NaN), rolls February 30 over to March, and
 * gives NaN for a `+01` offset the schema allows.
 */

/** date [Tt ] hh:mm:ss[.fraction] offset (Z, ±hh:mm, ±hhmm or ±hh). */
const DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?(?:([Zz])|([+-])(\d{2})(?::?(\d{2}))?)$/;
const MINUTE_MS = 60_000;
const DAY_MS = 86_400_000;
/** Days in the Gregorian 400-year cycle: Date.UTC reads years 0-99 as 1900-1999, so those are read 400 years on and moved back. */
const CYCLE_MS = 146_097 * DAY_MS;

/**
 * What a leap second (RFC 3339 5.7: second 60, only at 23:59 UTC, where leap seconds are
 * inserted) stands for, since a millisecond count (POSIX time) has no such second:
 * - `next-second`: the start of the next second, the next day's 00:00:00.000 UTC (23:59:59 plus
 *   one second, as POSIX time counts it). For a time something must not happen before
 *   (`scheduledAt`): every millisecond before it is earlier than the leap second.
 * - `end-of-minute`: the last millisecond of its minute, 23:59:59.999. For query range bounds:
 *   the leap second stays in the UTC day and hour that name it (a daily series to 23:59:60 does
 *   not gain the next day).
 */
export type LeapSecondReading = 'next-second' | 'end-of-minute';

/**
 * The instant (ms since the epoch) an RFC 3339 date-time with offset names, or undefined when it
 * is not one: no offset, a day or time that does not exist (2027-02-30, 24:00, an offset past
 * 23:59), or second 60 anywhere but 23:59 UTC. Fractions past the millisecond are cut, as
 * Date.parse does.
 */
export function parseDateTime(text: string, leap: LeapSecondReading = 'next-second'): number | undefined {
  const m = DATE_TIME.exec(text);
  if (!m) return undefined;
  const [year, month, day, hour, minute, second] = [m[1], m[2], m[3], m[4], m[5], m[6]].map(Number);
  if (month < 1 || month > 12 || day < 1 || day > daysIn(year, month) || hour > 23 || minute > 59 || second > 60) return undefined;
  const offsetMs = offsetOf(m);
  if (offsetMs === undefined) return undefined;
  // Second 60 is read as 59 here; the leap second's own reading is added below once its minute is known to be 23:59 UTC.
  const ms = utc(year, month, day, hour, minute, Math.min(second, 59)) - offsetMs;
  if (second < 60) return ms + millisOf(m[7]);
  const minuteOfDayMs = (((ms - 59_000) % DAY_MS) + DAY_MS) % DAY_MS;
  if (minuteOfDayMs !== DAY_MS - MINUTE_MS) return undefined;
  return leap === 'next-second' ? ms + 1000 : ms + 999;
}

function daysIn(year: number, month: number): number {
  return new Date(utc(year, month + 1, 0, 0, 0, 0)).getUTCDate();
}

function utc(year: number, month: number, day: number, hour: number, minute: number, second: number): number {
  return year < 100 ? Date.UTC(year + 400, month - 1, day, hour, minute, second) - CYCLE_MS : Date.UTC(year, month - 1, day, hour, minute, second);
}

/** The offset in ms east of UTC, or undefined past ±23:59 (RFC 3339 time-numoffset). */
function offsetOf(m: RegExpExecArray): number | undefined {
  if (m[8] !== undefined) return 0;
  const hours = Number(m[10]);
  const minutes = m[11] === undefined ? 0 : Number(m[11]);
  if (hours > 23 || minutes > 59) return undefined;
  return (m[9] === '-' ? -1 : 1) * (hours * 60 + minutes) * MINUTE_MS;
}

/** A fraction's milliseconds: its first three digits, cut (not rounded), as Date.parse does. */
function millisOf(fraction: string | undefined): number {
  return fraction === undefined ? 0 : Number(fraction.slice(0, 3).padEnd(3, '0'));
}
