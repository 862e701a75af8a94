import { describe, expect, it } from 'vitest';
import { FieldErrorList } from '../../src/domain/errors.js';
import { parseDateTime } from '../../src/domain/date-time.js';
import { checkScheduledAt, firstDueMs, shownStatus } from '../../src/domain/schedule.js';

const NOW = Date.parse('2026-12-01T08:00:00Z');

function check(value: string | undefined, maxDays = 30) {
  const errors = new FieldErrorList();
  const ms = checkScheduledAt(value, { nowMs: NOW, maxDays, pointer: '/scheduledAt' }, errors);
  return { ms, errors: errors.toJSON()['/scheduledAt']?.map((e) => e.code) };
}

describe('scheduledAt', () => {
  it('reads an RFC 3339 date-time with its offset', () => {
    expect(parseDateTime('2026-12-06T09:00:00+01:00')).toBe(Date.parse('2026-12-06T08:00:00Z'));
    expect(parseDateTime('2026-12-06t08:00:00.250z')).toBe(Date.parse('2026-12-06T08:00:00.250Z'));
    expect(parseDateTime('2026-12-06T08:00:00.123999Z')).toBe(Date.parse('2026-12-06T08:00:00.123Z'));
    expect(parseDateTime('2026-12-06T03:30:00-04:30')).toBe(Date.parse('2026-12-06T08:00:00Z'));
    expect(parseDateTime('0050-03-01T00:00:00Z')).toBe(Date.parse('0050-03-01T00:00:00Z'));
  });

  it('reads what the query schemas\' date-time format takes: a space for the T, an offset as +0100 or +01', () => {
    const at = Date.parse('2026-12-06T08:00:00Z');
    for (const v of ['2026-12-06 09:00:00+01:00', '2026-12-06T09:00:00+0100', '2026-12-06T09:00:00+01']) expect(parseDateTime(v), v).toBe(at);
  });

  it('takes a leap second (RFC 3339 5.7) at 23:59:60 UTC as the next second, 00:00:00 of the next day', () => {
    expect(check('2026-12-31T23:59:60Z', 60).ms).toBe(Date.parse('2027-01-01T00:00:00Z'));
    expect(check('2026-12-31T23:59:60.750Z', 60).ms).toBe(Date.parse('2027-01-01T00:00:00Z'));
    // 23:59:60 UTC written at another offset: the leap second is placed after the offset applies.
    expect(check('2026-12-31T18:59:60-05:00', 60).ms).toBe(Date.parse('2027-01-01T00:00:00Z'));
    expect(check('2027-01-01T05:29:60+05:30', 60).ms).toBe(Date.parse('2027-01-01T00:00:00Z'));
    expect(parseDateTime('2026-12-31T23:59:60Z', 'end-of-minute')).toBe(Date.parse('2026-12-31T23:59:59.999Z'));
  });

  it('refuses second 60 anywhere but 23:59 UTC, and second 61, as invalid_format', () => {
    for (const v of ['2026-12-06T12:30:60Z', '2026-12-06T23:58:60Z', '2026-12-31T23:59:60+01:00', '2026-12-31T23:59:61Z', '2026-12-06T12:00:60.5Z']) {
      expect(check(v, 60), v).toEqual({ ms: undefined, errors: ['invalid_format'] });
    }
  });

  it('refuses a time without an offset, a date only and a day that does not exist as invalid_format', () => {
    for (const v of ['2026-12-06T09:00:00', '2026-12-06', '2027-02-30T09:00:00Z', 'tomorrow', '2026-13-01T00:00:00Z', '2026-12-06T24:00:00Z', '2026-12-06T09:00:00+24:00', '2026-12-06T09:60:00Z']) {
      expect(check(v, 60), v).toEqual({ ms: undefined, errors: ['invalid_format'] });
    }
  });

  it('takes a time up to a minute in the past and refuses an older one as in_past', () => {
    expect(check('2026-12-01T07:59:00Z').ms).toBe(NOW - 60_000);
    expect(check('2026-12-01T07:58:59Z')).toEqual({ ms: undefined, errors: ['in_past'] });
  });

  it('takes a time maxScheduleDays ahead and refuses a later one as too_far', () => {
    expect(check('2026-12-31T08:00:00Z').ms).toBe(NOW + 30 * 86_400_000);
    expect(check('2026-12-31T08:00:01Z')).toEqual({ ms: undefined, errors: ['too_far'] });
    expect(check('2026-12-03T08:00:01Z', 2)).toEqual({ ms: undefined, errors: ['too_far'] });
  });

  it('makes the jobs due at the scheduled time, or at the commit when that is later', () => {
    expect(firstDueMs(undefined, NOW)).toBe(NOW);
    expect(firstDueMs('2026-12-01T09:00:00.000Z', NOW)).toBe(NOW + 3_600_000);
    expect(firstDueMs('2026-12-01T07:59:30.000Z', NOW)).toBe(NOW);
  });

  it('shows a waiting scheduled message as scheduled, then queued at its time, and a canceled one as canceled', () => {
    const m = { status: 'queued' as const, scheduledAt: '2026-12-01T09:00:00.000Z' };
    expect(shownStatus(m, NOW)).toBe('scheduled');
    expect(shownStatus(m, NOW + 3_600_000)).toBe('queued');
    expect(shownStatus({ ...m, status: 'sent', canceledAt: '2026-12-01T08:10:00.000Z' }, NOW)).toBe('canceled');
    expect(shownStatus({ status: 'sent' }, NOW)).toBe('sent');
  });
});
