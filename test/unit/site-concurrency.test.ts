import { describe, expect, it } from 'vitest';
import { SiteConcurrency, type ConcurrencyChange } from '../../src/delivery/site-concurrency.js';
import { slowsDown as isSlowDown } from '../../src/delivery/smtp-results.js';
import { SiteLimitTable } from '../../src/delivery/site-limits.js';
import type { AttemptResult } from '../../src/domain/delivery-result.js';

function setup(o: { probe?: boolean; concurrency?: number } = {}) {
  let now = 1_000_000;
  const changes: ConcurrencyChange[] = [];
  const sites = new SiteConcurrency({
    limits: new SiteLimitTable(o.concurrency ?? 8).siteLimits,
    now: () => now,
    quietMs: 60_000,
    onChange: (c) => changes.push(c),
    probe: o.probe,
  });
  return { sites, changes, advance: (ms: number) => (now += ms), now: () => now };
}

/** Starts attempts of the domain while there is room; returns how many started. */
function fill(sites: SiteConcurrency, domain: string): number {
  let n = 0;
  while (sites.hasRoom(domain)) {
    sites.acquire(domain);
    n++;
  }
  return n;
}

describe('SiteConcurrency', () => {
  it("holds a probe that finds its site full until one of the site's attempts ends, and lets an aborted wait go", async () => {
    const { sites } = setup({ probe: true, concurrency: 2 });
    const live = new AbortController().signal;
    sites.learn('a.test', 'mx.shared.test');
    sites.acquire('b.test'); // b's probe, its site not known yet
    expect(fill(sites, 'a.test')).toBe(2);
    expect(sites.admit('a.test', live)).toBeUndefined(); // planned against the site: goes on
    sites.learn('b.test', 'mx.shared.test'); // b's probe moves to the full site: 3 counted
    let admitted: boolean | undefined;
    void sites.admit('b.test', live)!.then((ok) => (admitted = ok));
    const aborted = new AbortController();
    sites.acquire('c.test');
    sites.learn('c.test', 'mx.shared.test');
    const cWait = sites.admit('c.test', aborted.signal)!;
    aborted.abort();
    expect(await cWait).toBe(false);
    sites.release('c.test');
    await Promise.resolve();
    expect(admitted).toBeUndefined();
    sites.release('a.test'); // one of the site's two active attempts ended: b goes
    await Promise.resolve();
    expect(admitted).toBe(true);
  });

  it('never leaves waiters without an active attempt to wait for, even after a "slow down" halved the site', async () => {
    const { sites } = setup({ probe: true, concurrency: 4 });
    const live = new AbortController().signal;
    sites.learn('a.test', 'mx.shared.test');
    expect(fill(sites, 'a.test')).toBe(4);
    for (const d of ['b.test', 'c.test']) {
      sites.acquire(d);
      sites.learn(d, 'mx.shared.test');
    }
    const waits = ['b.test', 'c.test'].map((d) => sites.admit(d, live)!);
    sites.slowDown('a.test', 0); // 4 -> 2
    for (let i = 0; i < 4; i++) sites.release('a.test');
    expect(await Promise.all(waits)).toEqual([true, true]);
  });

  it('counts two domains with the same MX site against one budget', () => {
    const { sites } = setup({ concurrency: 3 });
    sites.learn('a.test', 'mx.shared.test');
    sites.learn('b.test', 'mx.shared.test');
    expect(fill(sites, 'a.test')).toBe(3);
    expect(sites.hasRoom('b.test')).toBe(false);
    sites.release('a.test');
    expect(sites.hasRoom('b.test')).toBe(true);
  });

  it('moves attempts counted under the domain to its site when the site is learned', () => {
    const { sites } = setup({ concurrency: 3 });
    sites.learn('a.test', 'mx.shared.test');
    sites.acquire('a.test');
    sites.acquire('b.test'); // site not known yet: counted under b.test
    expect(sites.count('mx.shared.test')).toBe(1);
    expect(sites.learn('b.test', 'mx.shared.test')).toBe(true);
    expect(sites.count('mx.shared.test')).toBe(2);
    expect(sites.count('b.test')).toBe(0);
    expect(sites.learn('b.test', 'mx.shared.test')).toBe(false); // no news
    sites.release('b.test');
    sites.release('a.test');
    expect(sites.count('mx.shared.test')).toBe(0);
  });

  it('lets a domain whose site is unknown probe with one attempt when sites are learned', () => {
    const { sites } = setup({ probe: true, concurrency: 3 });
    expect(fill(sites, 'new.test')).toBe(1);
    sites.learn('new.test', 'mx.new.test');
    expect(fill(sites, 'new.test')).toBe(2);
  });

  it('treats each domain as its own site when nothing teaches sites', () => {
    const { sites } = setup({ concurrency: 3 });
    expect(fill(sites, 'new.test')).toBe(3);
  });

  it('halves the concurrency on a slow-down reply (at least 1) and restores it step by step after quiet periods', () => {
    const { sites, changes, advance, now } = setup({ concurrency: 8 });
    sites.learn('a.test', 'mx.a.test');
    sites.slowDown('a.test', now());
    expect(sites.limitOf('mx.a.test')).toBe(4);
    advance(1);
    sites.slowDown('a.test', now());
    advance(1);
    sites.slowDown('a.test', now());
    advance(1);
    sites.slowDown('a.test', now());
    expect(sites.limitOf('mx.a.test')).toBe(1);
    advance(59_999);
    expect(sites.limitOf('mx.a.test')).toBe(1);
    advance(1);
    expect(sites.limitOf('mx.a.test')).toBe(2);
    advance(60_000 * 3);
    expect(sites.limitOf('mx.a.test')).toBe(5);
    advance(60_000 * 10);
    expect(sites.limitOf('mx.a.test')).toBe(8);
    // One log line per change: 8→4→2→1, then 1→2, 2→5, 5→8.
    expect(changes.map((c) => [c.reason, c.from, c.to])).toEqual([
      ['slow_down', 8, 4],
      ['slow_down', 4, 2],
      ['slow_down', 2, 1],
      ['restored', 1, 2],
      ['restored', 2, 5],
      ['restored', 5, 8],
    ]);
  });

  it('lowers once for replies to attempts started before the last decrease, and they restart the quiet period', () => {
    const { sites, changes, advance, now } = setup({ concurrency: 8 });
    const startedAt = now();
    advance(10);
    for (let i = 0; i < 5; i++) sites.slowDown('a.test', startedAt);
    expect(sites.limitOf('a.test')).toBe(4);
    expect(changes).toHaveLength(1);
    advance(50_000);
    sites.slowDown('a.test', startedAt);
    advance(50_000);
    expect(sites.limitOf('a.test')).toBe(4); // quiet for 50 s only
    advance(10_000);
    expect(sites.limitOf('a.test')).toBe(5);
  });

  it('keeps the room it lowered: no new attempt while the lowered limit is used', () => {
    const { sites, now } = setup({ concurrency: 4 });
    expect(fill(sites, 'a.test')).toBe(4);
    sites.slowDown('a.test', now());
    sites.release('a.test');
    sites.release('a.test');
    expect(sites.hasRoom('a.test')).toBe(false); // 2 in flight, limit 2
    sites.release('a.test');
    expect(sites.hasRoom('a.test')).toBe(true);
  });
});

describe('isSlowDown', () => {
  const result = (r: Partial<AttemptResult['recipients'][number]>, smtpCode?: number): AttemptResult => ({
    recipients: [{ recipient: 'r@a.test', outcome: 'deferred', category: 'other', phase: 'rcpt', response: '', ...r }],
    tls: false,
    smtpCode,
    response: '',
  });

  it('is true for a 421 and for a rate-limit reply', () => {
    expect(isSlowDown(result({ smtpCode: 421 }, 421))).toBe(true);
    expect(isSlowDown(result({ smtpCode: 450, enhancedCode: '4.7.28', category: 'rate_limited' }, 450))).toBe(true);
  });

  it('is false for greylisting, a full mailbox or a delivery', () => {
    expect(isSlowDown(result({ smtpCode: 451, enhancedCode: '4.7.1', category: 'greylisted' }, 451))).toBe(false);
    expect(isSlowDown(result({ smtpCode: 452, category: 'mailbox_full' }, 452))).toBe(false);
    expect(isSlowDown(result({ outcome: 'delivered', category: 'delivered', smtpCode: 250 }, 250))).toBe(false);
  });
});
