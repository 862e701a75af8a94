import { describe, expect, it } from 'vitest';
import type { AttemptResult } from '../../src/domain/delivery-result.js';
import { createLogger } from '../../src/log/logger.js';
import { FIRST_BACKOFF_MS, MAX_BACKOFF_MS, PROBE_LEASE_MS, SourceHealthGate } from '../../src/delivery/source-health.js';
import { FakeClock } from '../support/fake-clock.js';

const SOURCES = [
  { name: 'a', address: '127.0.0.2' },
  { name: 'b', address: '127.0.0.3' },
  { name: 'gone', address: '192.0.2.55' },
];

function rig(o: { bindable?: (address: string) => Promise<boolean> } = {}) {
  const clock = new FakeClock();
  const lines: Record<string, unknown>[] = [];
  const logger = createLogger({ level: 'info', destination: { write: (s: string) => void lines.push(JSON.parse(s) as Record<string, unknown>) } });
  const gate = new SourceHealthGate({ sources: SOURCES, logger, bindable: o.bindable, now: () => clock.now() });
  /** Reports one attempt from `source` at `site` that started now and ended now. */
  const attempt = (source: string, site: string, result: AttemptResult) => gate.observe({ source, site, pool: 'p', domain: site }, result, clock.now(), clock.now());
  return { clock, lines, gate, attempt };
}

const delivered: AttemptResult = { recipients: [{ recipient: 'r@x', outcome: 'delivered', category: 'delivered', phase: 'message', smtpCode: 250, response: '250 ok' }], tls: false, reused: false, smtpCode: 250, response: '250 ok' };
const refused: AttemptResult = {
  recipients: [{ recipient: 'r@x', outcome: 'deferred', category: 'connection', phase: 'connect', response: 'ECONNECTION: connect ECONNREFUSED' }],
  tls: false,
  response: 'ECONNECTION: connect ECONNREFUSED',
  connectFailed: true,
};
const unbindable: AttemptResult = { ...refused, response: 'EADDRNOTAVAIL: bind EADDRNOTAVAIL 192.0.2.55', localError: 'address_unavailable' };

describe('the source health gate', () => {
  it('takes a source whose address is not on the machine out at once, for every site, with a warn line naming it', async () => {
    const { clock, gate, attempt, lines } = rig();
    attempt('gone', 'gmail', unbindable);
    for (const site of ['gmail', 'yahoo', 'example.com']) {
      expect(gate.check('gone', site, clock.now())).toEqual({ gate: 'health', reason: 'health: address 192.0.2.55 is not on this machine (EADDRNOTAVAIL)', until: clock.now() + FIRST_BACKOFF_MS });
    }
    expect(gate.check('a', 'gmail', clock.now())).toBeUndefined();
    expect(gate.availability()).toEqual([
      { source: 'a', available: true },
      { source: 'b', available: true },
      { source: 'gone', available: false },
    ]);
    const warn = lines.filter((l) => l.level === 40);
    expect(warn).toHaveLength(1);
    expect(warn[0]).toMatchObject({ source: 'gone', address: '192.0.2.55', msg: 'sending source out of its pools', until: new Date(clock.now() + FIRST_BACKOFF_MS).toISOString() });
    expect(await gate.view('gone')).toEqual({
      status: 'out',
      since: new Date(clock.now()).toISOString(),
      until: new Date(clock.now() + FIRST_BACKOFF_MS).toISOString(),
      reason: 'address 192.0.2.55 is not on this machine (EADDRNOTAVAIL)',
      cause: 'address_unavailable',
      consecutiveFailures: 1,
    });
    expect(await gate.view('a')).toEqual({ status: 'ok', since: null, until: null, reason: null, cause: null, consecutiveFailures: 0 });
  });

  it('probes a missing address by binding it, doubling the backoff while it stays missing, up to 30 minutes', async () => {
    let present = false;
    const binds: string[] = [];
    const { clock, gate, attempt } = rig({ bindable: (address) => (binds.push(address), Promise.resolve(present)) });
    attempt('gone', 'gmail', unbindable);
    const outs: number[] = [];
    for (let i = 0; i < 7; i++) {
      const until = gate.check('gone', 'gmail', clock.now())!.until!;
      outs.push(until - clock.now());
      clock.advance(until - clock.now());
      // Due: the bind check runs (no message spent); the source stays out meanwhile.
      expect(gate.check('gone', 'gmail', clock.now())?.reason).toMatch(/checking whether address 192.0.2.55 is back/);
      await Promise.resolve();
      await Promise.resolve();
    }
    expect(outs).toEqual([1, 2, 4, 8, 16, 30, 30].map((m) => m * 60_000));
    expect(binds).toEqual(Array(7).fill('192.0.2.55'));
    expect(MAX_BACKOFF_MS).toBe(30 * 60_000);
    // The address is back: once it binds, one probe attempt may go; its success brings the source back.
    present = true;
    clock.advance(gate.check('gone', 'gmail', clock.now())!.until! - clock.now());
    gate.check('gone', 'gmail', clock.now());
    await Promise.resolve();
    await Promise.resolve();
    expect(gate.check('gone', 'gmail', clock.now())).toBeUndefined();
    expect(await gate.reserve({ source: 'gone', site: 'gmail', pool: 'p', domain: 'gmail.com' }, clock.now())).toBe(true);
    attempt('gone', 'gmail', delivered);
    expect(gate.check('gone', 'yahoo', clock.now())).toBeUndefined();
    expect((await gate.view('gone')).status).toBe('ok');
  });

  it('gives a source that is out one probe attempt at a time after its backoff, and brings it back after a success with the backoff reset', async () => {
    const { clock, gate, attempt, lines } = rig();
    // Sites that b reaches, a failing at them.
    for (const site of ['gmail', 'yahoo']) attempt('b', site, delivered);
    for (const site of ['gmail', 'yahoo', 'gmail', 'yahoo', 'gmail']) attempt('a', site, refused);
    expect(gate.check('a', 'outlook', clock.now())?.until).toBe(clock.now() + FIRST_BACKOFF_MS);
    expect((await gate.view('a')).reason).toBe('5 connections in a row opened nothing (refused, unreachable or no greeting) at 2 sites, where other sources get through');
    clock.advance(FIRST_BACKOFF_MS);
    expect(gate.check('a', 'gmail', clock.now())).toBeUndefined();
    const probe = { source: 'a', site: 'gmail', pool: 'p', domain: 'gmail.com' };
    expect(await gate.reserve(probe, clock.now())).toBe(true);
    // A second pick while the probe is out is refused, until the probe's lease runs out.
    expect(await gate.reserve(probe, clock.now())).toBe(false);
    expect(gate.check('a', 'yahoo', clock.now())?.reason).toBe('health: a probe attempt is under way');
    // The probe fails: out again for twice as long.
    attempt('a', 'gmail', refused);
    expect(gate.check('a', 'gmail', clock.now())?.until).toBe(clock.now() + 2 * FIRST_BACKOFF_MS);
    clock.advance(2 * FIRST_BACKOFF_MS);
    expect(await gate.reserve(probe, clock.now())).toBe(true);
    clock.advance(PROBE_LEASE_MS);
    // The probe never reported (its attempt was not made after all): another one may go.
    expect(gate.check('a', 'gmail', clock.now())).toBeUndefined();
    expect(await gate.reserve(probe, clock.now())).toBe(true);
    // A probe that proved nothing (its DNS lookup failed: no connection tried) frees the next pick.
    attempt('a', 'gmail', { ...refused, connectFailed: undefined, recipients: [{ ...refused.recipients[0], phase: 'dns' }] });
    expect((await gate.view('a')).status).toBe('out');
    expect(await gate.reserve(probe, clock.now())).toBe(true);
    attempt('a', 'gmail', delivered);
    expect(gate.check('a', 'gmail', clock.now())).toBeUndefined();
    expect(lines.filter((l) => l.level === 30).map((l) => [l.msg, l.source])).toEqual([['sending source back in its pools', 'a']]);
    // Reset: the next time it goes out, it is for the first backoff again.
    for (const site of ['gmail', 'yahoo']) attempt('b', site, delivered);
    for (const site of ['gmail', 'yahoo', 'gmail', 'yahoo', 'gmail']) attempt('a', site, refused);
    expect(gate.check('a', 'gmail', clock.now())?.until).toBe(clock.now() + FIRST_BACKOFF_MS);
  });

  it('never takes a source out for one dead receiver, nor for receivers no other source reaches', async () => {
    const { clock, gate, attempt } = rig();
    attempt('b', 'gmail', delivered);
    // One site down for every source: 50 failures there.
    for (let i = 0; i < 50; i++) attempt('a', 'dead-site', refused);
    expect(gate.check('a', 'gmail', clock.now())).toBeUndefined();
    expect((await gate.view('a')).consecutiveFailures).toBe(50);
    // Failing at gmail too: still only one site another source reached.
    for (let i = 0; i < 10; i++) attempt('a', 'gmail', refused);
    expect(gate.check('a', 'gmail', clock.now())).toBeUndefined();
    // A success of its own ends the streak; failures at sites nobody reaches count for nothing.
    attempt('a', 'gmail', delivered);
    expect((await gate.view('a')).consecutiveFailures).toBe(0);
    for (const site of ['x', 'y', 'z', 'x', 'y', 'z']) attempt('a', site, refused);
    expect(gate.check('a', 'x', clock.now())).toBeUndefined();
  });

  it('ends a failure streak on a success over a new connection, not over a kept one', async () => {
    const { clock, gate, attempt } = rig();
    for (const site of ['gmail', 'yahoo']) attempt('b', site, delivered);
    for (const site of ['gmail', 'yahoo', 'gmail', 'yahoo']) attempt('a', site, refused);
    attempt('a', 'gmail', { ...delivered, reused: true });
    expect((await gate.view('a')).consecutiveFailures).toBe(4);
    attempt('a', 'yahoo', delivered);
    expect((await gate.view('a')).consecutiveFailures).toBe(0);
    for (const site of ['gmail', 'yahoo', 'gmail', 'yahoo']) attempt('a', site, refused);
    expect(gate.check('a', 'gmail', clock.now())).toBeUndefined();
  });

  it('takes a source whose address cannot be bound out at start, before any message is tried', async () => {
    const { clock, gate, lines } = rig({ bindable: (address) => Promise.resolve(address !== '192.0.2.55') });
    await gate.start();
    expect(gate.check('gone', 'gmail', clock.now())?.until).toBe(clock.now() + FIRST_BACKOFF_MS);
    expect(gate.check('a', 'gmail', clock.now())).toBeUndefined();
    expect(lines.filter((l) => l.level === 40).map((l) => l.source)).toEqual(['gone']);
  });

  it('ignores what attempts in flight when the source went out report afterwards, until its probe', async () => {
    const { clock, gate } = rig();
    const begun = clock.now();
    clock.advance(1000);
    gate.observe({ source: 'gone', site: 's', pool: 'p', domain: 's' }, unbindable, clock.now(), clock.now());
    // A late success and a late failure of attempts that started earlier change nothing, nor
    // does one that started in the same millisecond as the failure that took it out.
    gate.observe({ source: 'gone', site: 's', pool: 'p', domain: 's' }, delivered, begun, clock.now());
    gate.observe({ source: 'gone', site: 's', pool: 'p', domain: 's' }, unbindable, begun, clock.now());
    gate.observe({ source: 'gone', site: 's', pool: 'p', domain: 's' }, unbindable, clock.now(), clock.now() + 5);
    expect(gate.check('gone', 's', clock.now())?.until).toBe(clock.now() + FIRST_BACKOFF_MS);
    expect((await gate.view('gone')).consecutiveFailures).toBe(1);
  });
});
