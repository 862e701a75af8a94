/**
 * The Sources page's reading of the gates' parts of GET /ops/sources (dashboard/src/pages/
 * sources-gates.ts): each gate owns its fields, so the page takes what it knows, ignores the
 * rest, and shows nothing of a part that is absent or not of the expected kind.
 */
import { describe, expect, it } from 'vitest';
import { healthOf, shapingOf, warmupOf } from '../../dashboard/src/pages/sources-gates.js';

describe('warmupOf', () => {
  it('reads the day of the plan and each provider\'s sent/cap today and this hour, nested or flat', () => {
    expect(
      warmupOf({ start: '2026-12-01', day: 3, days: 30, complete: false, sites: { google: { today: { sent: 4, cap: 50 }, hour: { sent: 1, cap: 3 } }, yahoo: { sentToday: 2, todayCap: 20 } }, extra: { x: 1 } }),
    ).toEqual({
      day: 3,
      days: 30,
      complete: false,
      start: '2026-12-01',
      sites: [
        { key: 'google', todaySent: 4, todayCap: 50, hourSent: 1, hourCap: 3 },
        { key: 'yahoo', todaySent: 2, todayCap: 20, hourSent: undefined, hourCap: undefined },
      ],
    });
  });

  it('takes a list of sites named by provider, and says when the plan is complete', () => {
    const w = warmupOf({ complete: true, sites: [{ provider: 'microsoft', day: { sent: 9, cap: 10 } }, { nothing: 'to name it' }, 'junk'] });
    expect(w?.complete).toBe(true);
    expect(w?.sites).toEqual([{ key: 'microsoft', todaySent: 9, todayCap: 10, hourSent: undefined, hourCap: undefined }]);
  });

  it('gives nothing for an absent part or one that is not an object', () => {
    expect(warmupOf(undefined)).toBeUndefined();
    expect(warmupOf(null)).toBeUndefined();
    expect(warmupOf([1, 2])).toBeUndefined();
    expect(warmupOf('warming')).toBeUndefined();
  });
});

describe('shapingOf', () => {
  const entry = { site: 'yahoo', rule: 'yahoo-ts04', action: 'suspend', since: 1_700_000_000_000, until: '2026-12-05T17:00:00.000Z', note: 'ignored' };

  it('reads a list, an object holding one, or one entry per site', () => {
    const expected = [{ site: 'yahoo', rule: 'yahoo-ts04', action: 'suspend', since: 1_700_000_000_000, until: '2026-12-05T17:00:00.000Z' }];
    expect(shapingOf([entry])).toEqual(expected);
    expect(shapingOf({ active: [entry] })).toEqual(expected);
    const { site: _site, ...rest } = entry;
    expect(shapingOf({ sites: { yahoo: rest } })).toEqual(expected);
  });

  it('drops entries without a site and times that are not times, and an action given as an object gives its kind', () => {
    expect(shapingOf([{ rule: 'x' }, { site: 'gmail', until: 'soon', action: { kind: 'throttle', perSecond: 2 } }])).toEqual([
      { site: 'gmail', rule: undefined, action: 'throttle', since: undefined, until: undefined },
    ]);
  });

  it('gives an empty list for a part with nothing active, and nothing for an absent part', () => {
    expect(shapingOf({ active: [] })).toEqual([]);
    expect(shapingOf({})).toEqual([]);
    expect(shapingOf(undefined)).toBeUndefined();
    expect(shapingOf(7)).toBeUndefined();
  });
});

describe('healthOf', () => {
  it('reads ok, or out with until, reason and the failures in a row', () => {
    expect(healthOf({ status: 'ok' })).toEqual({ status: 'ok', since: undefined, until: undefined, reason: undefined, consecutiveFailures: undefined });
    expect(healthOf({ status: 'out', since: 1, until: 2, reason: 'EADDRNOTAVAIL', consecutiveFailures: 3, more: true })).toEqual({
      status: 'out',
      since: 1,
      until: 2,
      reason: 'EADDRNOTAVAIL',
      consecutiveFailures: 3,
    });
  });

  it('takes a bare word or an available flag, and gives nothing without a status', () => {
    expect(healthOf('out')).toEqual({ status: 'out' });
    expect(healthOf({ available: false })?.status).toBe('out');
    expect(healthOf({ reason: 'no status' })).toBeUndefined();
    expect(healthOf(undefined)).toBeUndefined();
  });
});
