/**
 * The warm-up gate (src/delivery/warmup-gate.ts) on the single-node coordination and a fake
 * clock: a warming source's day and hour caps per provider hold, across hour and day
 * boundaries, and reset in the next window; warm sources are never refused; check() answers
 * from what the last reserve learned; view() shows the progress. The cluster-wide counting is
 * the counters' contract (test/store-contract/coordination-limits.contract.test.ts).
 */
import { describe, expect, it } from 'vitest';
import { LocalCoordination } from '../../src/coordination/local.js';
import type { Coordination } from '../../src/coordination/port.js';
import { resolveSendingIps, type SourceSetting } from '../../src/domain/sending-ips.js';
import type { SourceAttempt } from '../../src/delivery/source-gates.js';
import { WarmupGate, type WarmupGateOptions } from '../../src/delivery/warmup-gate.js';
import { FakeClock } from '../support/fake-clock.js';

const HOUR = 3_600_000;
const GMAIL = 'alt1.gmail-smtp-in.l.google.com,gmail-smtp-in.l.google.com';
const WORKSPACE = 'alt1.aspmx.l.google.com,aspmx.l.google.com';
const YAHOO = 'mta5.am0.yahoodns.net,mta6.am0.yahoodns.net';

/** 09:00 UTC on 2025-01-06 (FakeClock's default): 15 hours of day 1 are left. */
function setup(warmup: SourceSetting['warmup'], coordination?: Coordination, dns?: WarmupGateOptions['dns']) {
  const clock = new FakeClock();
  const sources: SourceSetting[] = [{ name: 'new', address: '127.0.0.2', warmup }, { name: 'old', address: '127.0.0.3' }];
  const ips = resolveSendingIps({ sources, pools: {}, defaultPools: { transactional: '', broadcast: '' } }, 'mta.example');
  const gate = new WarmupGate({ ips, coordination: coordination ?? new LocalCoordination({ nodeId: 'test', clock }), dns });
  const attempt = (site: string, source = 'new'): SourceAttempt => ({ source, site, pool: 'default', domain: 'example.com' });
  /** Reserves until refused (at most `max`); the number granted. */
  const fill = async (site: string, max = 1_000): Promise<number> => {
    let n = 0;
    while (n < max && (await gate.reserve(attempt(site), clock.now()))) n++;
    return n;
  };
  return { clock, gate, attempt, fill };
}

describe('warm-up gate', () => {
  it('holds the hourly and the daily cap per provider, across hours, and starts again the next day', async () => {
    // Day 1: 12 a day, 5 an hour (the floor); day 2: 40 a day, 7 an hour; then no cap.
    const { clock, gate, fill } = setup({ start: '2025-01-06', curve: [12, 40] });
    expect(await fill(GMAIL)).toBe(5);
    const refusal = gate.check('new', GMAIL, clock.now());
    expect(refusal).toEqual({ gate: 'warmup', reason: 'warm-up: 5 of 5 messages to google this hour (day 1)', until: Date.UTC(2025, 0, 6, 10) });
    // Gmail and Google Workspace are one provider: its hour is full too; Yahoo is counted apart.
    expect(gate.check('new', WORKSPACE, clock.now())).toBeDefined();
    expect(await fill(YAHOO)).toBe(5);
    clock.advance(HOUR - 1);
    expect(gate.check('new', GMAIL, clock.now())).toBeDefined();
    expect(await fill(GMAIL)).toBe(0);
    clock.advance(1);
    expect(gate.check('new', GMAIL, clock.now())).toBeUndefined();
    expect(await fill(WORKSPACE)).toBe(5);
    clock.advance(HOUR);
    // 10 of 12 today: two more, then the day is full until midnight UTC.
    expect(await fill(GMAIL)).toBe(2);
    expect(gate.check('new', GMAIL, clock.now())).toEqual({ gate: 'warmup', reason: 'warm-up: 12 of 12 messages to google today (day 1)', until: Date.UTC(2025, 0, 7) });
    clock.advance(HOUR);
    expect(await fill(GMAIL)).toBe(0);
    // Day 2.
    clock.ms = Date.UTC(2025, 0, 7, 0, 0);
    expect(gate.check('new', GMAIL, clock.now())).toBeUndefined();
    expect(await fill(GMAIL)).toBe(7);
    // Day 3: the curve has ended, the source is warm.
    clock.ms = Date.UTC(2025, 0, 8, 0, 0);
    expect(await fill(GMAIL, 500)).toBe(500);
    expect(gate.check('new', GMAIL, clock.now())).toBeUndefined();
  });

  it('counts a domain whose site the picker does not know yet under its MX site, by the MX lookup', async () => {
    const mx: WarmupGateOptions['dns'] = {
      mx: async (name) =>
        name === 'gmail.com'
          ? { status: 'ok', ttl: 300, records: [{ exchange: 'gmail-smtp-in.l.google.com', priority: 5 }, { exchange: 'alt1.gmail-smtp-in.l.google.com', priority: 10 }] }
          : { status: 'nodata' },
    };
    const { clock, gate, attempt } = setup({ start: '2025-01-06', curve: [5] }, undefined, mx);
    const first = (site: string, domain: string) => gate.reserve({ ...attempt(site), domain }, clock.now());
    for (let i = 0; i < 3; i++) expect(await first('gmail.com', 'gmail.com')).toBe(true);
    for (let i = 0; i < 2; i++) expect(await first(GMAIL, 'gmail.com')).toBe(true);
    expect(await first('gmail.com', 'gmail.com')).toBe(false);
    // Refused under the picker's key as well, with the provider's count.
    expect(gate.check('new', 'gmail.com', clock.now())?.reason).toBe('warm-up: 5 of 5 messages to google today (day 1)');
    // A domain without MX records is its own site.
    expect(await first('implicit.example', 'implicit.example')).toBe(true);
    expect((await gate.view('new', clock.now()))!.sites.find((s) => s.key === 'implicit.example')?.today).toEqual({ sent: 1, cap: 5 });
  });

  it('never refuses a source without a plan', async () => {
    const { clock, gate, attempt } = setup({ start: '2025-01-06', curve: [1] });
    for (let i = 0; i < 50; i++) expect(await gate.reserve(attempt(GMAIL, 'old'), clock.now())).toBe(true);
    expect(gate.check('old', GMAIL, clock.now())).toBeUndefined();
    expect(await gate.view('old', clock.now())).toBeUndefined();
  });

  it('counts each site outside the provider table apart, under the "other" curve', async () => {
    const { fill } = setup({ start: '2025-01-06', curve: [100], sites: { other: [2], yahoo: [3] } });
    expect(await fill('mx.small.example')).toBe(2);
    expect(await fill('mx.other.example')).toBe(2);
    expect(await fill(YAHOO)).toBe(3);
    expect(await fill(GMAIL)).toBe(17); // the plan's curve: 100 a day, 17 an hour
  });

  it('follows the built-in curves without a curve of its own, and holds day 1’s caps before the start', async () => {
    const { clock, gate, fill } = setup({ start: '2025-01-08' });
    expect(await fill(GMAIL)).toBe(9); // 50 a day, 9 an hour
    expect(await fill(YAHOO)).toBe(5); // 20 a day: the floor of 5 an hour
    const view = await gate.view('new', clock.now());
    expect(view).toMatchObject({ start: '2025-01-08', day: 0, days: 30, complete: false });
    expect(view!.sites.find((s) => s.key === 'google')).toEqual({ key: 'google', curve: 'google', today: { sent: 9, cap: 50 }, thisHour: { sent: 9, cap: 9 } });
    clock.ms = Date.UTC(2025, 1, 7); // day 31
    expect(await gate.view('new', clock.now())).toMatchObject({ day: 31, complete: true });
    expect(await fill(YAHOO, 100)).toBe(100);
  });

  it('shows the day of the plan and every provider’s and busy site’s counts against its caps', async () => {
    const { clock, gate, fill } = setup({ start: '2025-01-05', curve: [10, 20, 30], sites: { other: [1, 1] } });
    await fill(GMAIL, 3);
    await fill('mx.small.example');
    const view = (await gate.view('new', clock.now()))!;
    expect(view).toMatchObject({ start: '2025-01-05', day: 2, days: 3, complete: false });
    expect(view.sites.map((s) => s.key)).toEqual(['google', 'microsoft', 'yahoo', 'apple', 'united-internet', 'mail-ru', 'yandex', 'proton', 'fastmail', 'comcast', 'mx.small.example']);
    expect(view.sites[0]).toEqual({ key: 'google', curve: 'google', today: { sent: 3, cap: 20 }, thisHour: { sent: 3, cap: 5 } });
    expect(view.sites[10]).toEqual({ key: 'mx.small.example', curve: 'other', today: { sent: 1, cap: 1 }, thisHour: { sent: 1, cap: 1 } });
    clock.advance(HOUR);
    expect((await gate.view('new', clock.now()))!.sites[0]!.thisHour).toEqual({ sent: 0, cap: 5 });
  });

  it('refuses while the coordination does not answer, and says so', async () => {
    const errors: unknown[] = [];
    const broken = { counters: () => ({ add: () => Promise.reject(new Error('down')), read: () => Promise.reject(new Error('down')) }) } as unknown as Coordination;
    const clock = new FakeClock();
    const ips = resolveSendingIps({ sources: [{ name: 'new', address: '127.0.0.2', warmup: { start: '2025-01-06' } }], pools: {}, defaultPools: { transactional: '', broadcast: '' } }, 'mta.example');
    const gate = new WarmupGate({ ips, coordination: broken, onError: (err) => errors.push(err) });
    expect(await gate.reserve({ source: 'new', site: GMAIL, pool: 'default', domain: 'gmail.com' }, clock.now())).toBe(false);
    expect(errors).toHaveLength(1);
  });
});
