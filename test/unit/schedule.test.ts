import { describe, expect, it } from 'vitest';
import { FieldErrorList } from '../../src/domain/errors.js';
import { checkScheduledAt, firstDueMs, parseRfc3339, shownStatus } from '../../src/domain/schedule.js';

const NOW = Date.parse('2026-12-01T08:00:00Z');

function check(value: string | undefined, maxDays = 30) {
  const errors = new FieldErrorList();
  const ms = checkScheduledAt(value, { nowMs: NOW, maxDays, pointer: '/scheduledAt' }, errors);
  return { ms, errors: errors.toJSON()['/scheduledAt']?.map((e) => e.code) };
}

describe('scheduledAt', () => {
  it('reads an RFC 3339 date-time with its offset', () => {
    expect(parseRfc3339('2026-12-06T09:00:00+01:00')).toBe(Date.parse('2026-12-06T08:00:00Z'));
    expect(parseRfc3339('2026-12-06t08:00:00.250z')).toBe(Date.parse('2026-12-06T08:00:00.250Z'));
  });

  it('refuses a time without an offset, a date only and a day that does not exist as invalid_format', () => {
    for (const v of ['2026-12-06T09:00:00', '2026-12-06', '2027-02-30T09:00:00Z', 'tomorrow', '2026-13-01T00:00:00Z']) {
      expect(check(v), v).toEqual({ ms: undefined, errors: ['invalid_format'] });
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
