/**
 * SourcePicker (issue 35) with its gates and its sessions per source per site: a refused source's
 * turns go to the pool's others, a refused reservation sends the pick back to the chooser, every
 * source refused is a NoSource with each reason, busy sources make the pick wait for a session
 * of the site to end, and a "slow down" or a gate's ceiling lowers one source at one site only.
 */
import { describe, expect, it } from 'vitest';
import { LocalCoordination } from '../../src/coordination/local.js';
import type { AttemptResult } from '../../src/domain/delivery-result.js';
import { resolveSendingIps } from '../../src/domain/sending-ips.js';
import type { GateRefusal, SourceAttempt, SourceGate, SourceSiteCeiling } from '../../src/delivery/source-gates.js';
import { noSourceText, SourcePicker, type NoSource, type SourceTurn } from '../../src/delivery/source-picker.js';

const IPS = resolveSendingIps(
  {
    sources: [
      { name: 'a', address: '127.0.0.2' },
      { name: 'b', address: '127.0.0.3' },
    ],
    pools: { tx: [{ source: 'a', weight: 1 }, { source: 'b', weight: 1 }] },
    defaultPools: { transactional: 'tx', broadcast: '' },
  },
  'mta.sender.net',
);
const MESSAGE = { channelId: 'c1', mailType: 'transactional' as const };
const SITE = { domain: 'rcpt.net', site: 'mx.rcpt.net' };
const RESULT: AttemptResult = { recipients: [], tls: false, response: '250 ok' };

/** A gate driven by the test: refusals and ceilings per "source site", reservations answered from a list. */
class TestGate implements SourceGate {
  readonly name = 'test';
  refused = new Map<string, GateRefusal>();
  ceilings = new Map<string, SourceSiteCeiling>();
  reservations: boolean[] = [];
  reserved: string[] = [];
  observed: SourceAttempt[] = [];
  started = 0;
  check(source: string, site: string): GateRefusal | undefined {
    return this.refused.get(`${source} ${site}`);
  }
  async reserve(a: SourceAttempt): Promise<boolean> {
    this.reserved.push(a.source);
    return this.reservations.shift() ?? true;
  }
  observe(a: SourceAttempt): void {
    this.observed.push(a);
  }
  limits(source: string, site: string): SourceSiteCeiling | undefined {
    return this.ceilings.get(`${source} ${site}`);
  }
  start(): void {
    this.started++;
  }
}

function picker(gate: SourceGate, siteLimit = 2, ips = IPS): { p: SourcePicker; now: { ms: number } } {
  const now = { ms: 1_000_000 };
  const p = new SourcePicker({
    ips,
    channelPool: async () => undefined,
    coordination: new LocalCoordination({ nodeId: 'n1' }),
    defaultRate: 1000,
    siteLimit: () => siteLimit,
    gates: [gate],
    now: () => now.ms,
  });
  return { p, now };
}

async function turn(p: SourcePicker, signal = new AbortController().signal): Promise<SourceTurn> {
  const t = await p.pick(MESSAGE, SITE, signal);
  if ('refusals' in t) throw new Error(noSourceText(t));
  return t;
}

describe('SourcePicker with gates', () => {
  it("gives a refused source's turns to the pool's others, and answers every refusal when none is left", async () => {
    const gate = new TestGate();
    const { p } = picker(gate, 100);
    gate.refused.set('a mx.rcpt.net', { gate: 'test', reason: 'warm-up: 3 of 3 today', until: 5 });
    const names = [];
    for (let i = 0; i < 4; i++) names.push((await turn(p)).source.name);
    expect(names).toEqual(['b', 'b', 'b', 'b']);
    // Another site is not refused for a.
    const other = await p.pick(MESSAGE, { domain: 'x.net', site: 'mx.x.net' }, new AbortController().signal);
    expect('source' in other && other.source.name).toBe('a');
    gate.refused.set('b mx.rcpt.net', { gate: 'test', reason: 'suspended' });
    const none = (await p.pick(MESSAGE, SITE, new AbortController().signal)) as NoSource;
    expect(none.refusals.map((r) => r.source).sort()).toEqual(['a', 'b']);
    expect(noSourceText(none)).toMatch(/^no source of IP pool "tx" may send now \(.*a: warm-up: 3 of 3 today.*b: suspended/);
  });

  it('goes back to the chooser without a source whose reservation was refused', async () => {
    const gate = new TestGate();
    const { p } = picker(gate, 100);
    gate.reservations = [false];
    const t = await turn(p);
    expect(gate.reserved).toEqual(['a', 'b']);
    expect(t.source.name).toBe('b');
  });

  it("holds each source's sessions at a site to the site's limit, and waits for one to end when all are busy", async () => {
    const gate = new TestGate();
    const { p } = picker(gate, 1);
    const t1 = await turn(p);
    const t2 = await turn(p);
    expect([t1.source.name, t2.source.name].sort()).toEqual(['a', 'b']);
    let third: SourceTurn | undefined;
    const waiting = turn(p).then((t) => (third = t));
    await Promise.resolve();
    expect(third).toBeUndefined();
    t2.end();
    await waiting;
    expect(third!.source.name).toBe(t2.source.name);
    // A wait that its signal ends answers NoSource without refusals (all were busy, none refused).
    const ac = new AbortController();
    const aborted = p.pick(MESSAGE, SITE, ac.signal);
    ac.abort();
    expect(await aborted).toEqual({ pool: 'tx', refusals: [] });
  });

  it("lowers one source's sessions at one site on its slow down and on a gate's ceiling", async () => {
    const gate = new TestGate();
    const { p, now } = picker(gate, 4);
    const a = await turn(p);
    expect(a.source.name).toBe('a');
    p.observe(a, RESULT, now.ms - 10, true, SITE.site);
    a.end();
    // a: 4 → 2 sessions at the site; b keeps 4. Six sessions: a, b, a, b, b, b.
    const held = [];
    for (let i = 0; i < 6; i++) held.push((await turn(p)).source.name);
    expect(held.filter((n) => n === 'a')).toHaveLength(2);
    expect(held.filter((n) => n === 'b')).toHaveLength(4);
    // The gate's observe saw the site given (learned after the pick).
    expect(gate.observed).toEqual([{ source: 'a', pool: 'tx', domain: 'rcpt.net', site: 'mx.rcpt.net' }]);

    const gate2 = new TestGate();
    const { p: p2 } = picker(gate2, 4);
    gate2.ceilings.set('b mx.rcpt.net', { concurrency: 1 });
    const names = [];
    for (let i = 0; i < 5; i++) names.push((await turn(p2)).source.name);
    expect(names.sort()).toEqual(['a', 'a', 'a', 'a', 'b']);
  });

  it("holds a provider-wide ceiling's sessions over all of the provider's sites together (its scope)", async () => {
    const gate = new TestGate();
    const { p } = picker(gate, 4);
    const tenants = [{ domain: 'one.net', site: 'one.mail.protection.outlook.com' }, { domain: 'two.net', site: 'two.mail.protection.outlook.com' }];
    for (const t of tenants) gate.ceilings.set(`a ${t.site}`, { concurrency: 1, scope: 'provider:microsoft' });
    gate.refused.set('b one.mail.protection.outlook.com', { gate: 'test', reason: 'b not here' });
    gate.refused.set('b two.mail.protection.outlook.com', { gate: 'test', reason: 'b not here' });
    const first = await p.pick(MESSAGE, tenants[0]!, new AbortController().signal);
    expect('source' in first && first.source.name).toBe('a');
    // a holds its one Microsoft session at tenant one: tenant two must wait for it.
    let second: unknown;
    const waiting = p.pick(MESSAGE, tenants[1]!, new AbortController().signal).then((t) => (second = t));
    await new Promise((resolve) => setImmediate(resolve));
    expect(second).toBeUndefined();
    (first as SourceTurn).end();
    await waiting;
    expect((second as SourceTurn).source.name).toBe('a');
  });

  it('asks no gate and counts no session without delivery.sources (the kernel picks the address)', async () => {
    const gate = new TestGate();
    gate.refused.set('kernel mx.rcpt.net', { gate: 'test', reason: 'never asked' });
    const { p } = picker(gate, 1, resolveSendingIps({ sources: [], pools: {}, defaultPools: { transactional: '', broadcast: '' } }, 'mta.sender.net'));
    await p.start();
    const turns = [await turn(p), await turn(p), await turn(p)];
    expect(turns.map((t) => t.source.name)).toEqual(['kernel', 'kernel', 'kernel']);
    expect(turns[0]!.attempt).toBeUndefined();
    expect(gate.started).toBe(0);
    expect(gate.reserved).toEqual([]);
  });
});

describe('SourcePicker and a channel whose ipPool is gone', () => {
  it('sends through the default pool and tells once per channel and pool', async () => {
    const now = { ms: 1_000_000 };
    const told: string[] = [];
    const channelPools = new Map([['c1', 'bulk'], ['c2', 'tx']]);
    const p = new SourcePicker({
      ips: IPS,
      channelPool: async (id) => channelPools.get(id),
      coordination: new LocalCoordination({ nodeId: 'n1' }),
      defaultRate: 1000,
      siteLimit: () => 100,
      now: () => now.ms,
      onUnknownPool: (channelId, pool) => told.push(`${channelId} ${pool}`),
    });
    const first = await turn(p);
    expect(first.source.pool).toBe('tx');
    now.ms += 60_000; // past the channel's cached pool: read again, still gone, not told again
    await turn(p);
    await p.pick({ channelId: 'c2', mailType: 'transactional' }, SITE, new AbortController().signal);
    expect(told).toEqual(['c1 bulk']);
    channelPools.set('c1', 'bulk2');
    now.ms += 60_000;
    await turn(p);
    expect(told).toEqual(['c1 bulk', 'c1 bulk2']);
  });
});
