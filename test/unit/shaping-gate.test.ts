/**
 * The automatic shaping gate (delivery/shaping-gate.ts) on the single-node coordination and a
 * fake clock: a matching reply suspends or caps the source at the site (or every site of the
 * provider), a repeated match extends and never stacks, the change reaches another gate on the
 * same coordination through its refresh, ends when the clock passes its end, and an operator
 * can lift it early. Every change is one log line.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { LocalCoordination } from '../../src/coordination/local.js';
import type { AttemptResult } from '../../src/domain/delivery-result.js';
import { compileShapingRules } from '../../src/domain/shaping-match.js';
import { REFRESH_EVERY_MS, ShapingGate } from '../../src/delivery/shaping-gate.js';
import { createLogger } from '../../src/log/logger.js';
import { FakeClock } from '../support/fake-clock.js';
import { waitFor } from '../support/wait.js';

const YAHOO = 'mta5.am0.yahoodns.net,mta6.am0.yahoodns.net';
const AOL = 'mx-aol.mail.gm0.yahoodns.net';
const OUTLOOK = 'example-com.mail.protection.outlook.com';
const HOUR = 3_600_000;
const TSS04 = '421 4.7.0 [TSS04] Messages from 127.0.0.2 temporarily deferred due to unexpected volume or user complaints - 4.16.55.1; see https://postmaster.yahooinc.com/error-codes';

let dir: string;
let clock: FakeClock;
let coordination: LocalCoordination;
let lines: Record<string, unknown>[];
const gates: ShapingGate[] = [];

beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'postrider-shaping-gate-'));
  clock = new FakeClock();
  coordination = LocalCoordination.forDataDir(dir, { clock });
  lines = [];
});
afterEach(() => {
  for (const g of gates.splice(0)) g.stop();
  fs.rmSync(dir, { recursive: true, force: true });
});

function gate(rules = compileShapingRules()): ShapingGate {
  const logger = createLogger({ level: 'info', destination: { write: (s: string) => void lines.push(JSON.parse(s) as Record<string, unknown>) } });
  const g = new ShapingGate({ coordination, rules, logger, clock });
  gates.push(g);
  return g;
}

function deferred(response: string, smtpCode: number, enhancedCode: string, mx?: string): AttemptResult {
  return { recipients: [{ recipient: 'a@yahoo.com', outcome: 'deferred', category: 'rate_limited', phase: 'rcpt', smtpCode, enhancedCode, response }], mx, tls: false, smtpCode, enhancedCode, response };
}

const attempt = (source: string, site: string) => ({ source, site, pool: 'default', domain: 'yahoo.com' });
const messages = (level: number) => lines.filter((l) => l.level === level).map((l) => l.msg);

describe('automatic shaping gate', () => {
  it('suspends the source at every Yahoo site for 2 h on [TSS04], and lets it go after', () => {
    const g = gate();
    const t0 = clock.now();
    g.observe(attempt('ip1', YAHOO), deferred(TSS04, 421, '4.7.0'), t0, t0);
    const refusal = g.check('ip1', YAHOO, t0);
    expect(refusal).toMatchObject({ gate: 'shaping', until: t0 + 2 * HOUR });
    expect(refusal!.reason).toMatch(/yahoo-tss04 suspended ip1 at provider:yahoo/);
    // Another Yahoo site (AOL's MX) too: the rule names the provider.
    expect(g.check('ip1', AOL, t0)).toBeDefined();
    // Not the other source, not another provider.
    expect(g.check('ip2', YAHOO, t0)).toBeUndefined();
    expect(g.check('ip1', OUTLOOK, t0)).toBeUndefined();
    expect(lines.filter((l) => l.level === 40)).toMatchObject([{ source: 'ip1', site: 'provider:yahoo', rule: 'yahoo-tss04', action: 'suspend', until: new Date(t0 + 2 * HOUR).toISOString() }]);
    clock.advance(2 * HOUR - 1);
    expect(g.check('ip1', YAHOO, clock.now())).toBeDefined();
    clock.advance(1);
    expect(g.check('ip1', YAHOO, clock.now())).toBeUndefined();
    expect(lines.filter((l) => l.level === 30)).toMatchObject([{ source: 'ip1', site: 'provider:yahoo', rule: 'yahoo-tss04', msg: 'automatic shaping ended: its time is up' }]);
  });

  it('holds the source to one session and 1/s at Microsoft for 30 min on 4.7.500, as limits()', () => {
    const g = gate();
    const t0 = clock.now();
    g.observe(attempt('ip1', OUTLOOK), deferred('451 4.7.500 Server busy. Please try again later from [127.0.0.2]. (S77719)', 451, '4.7.500'), t0, t0);
    expect(g.check('ip1', OUTLOOK, t0)).toBeUndefined();
    expect(g.limits('ip1', OUTLOOK, t0)).toEqual({ concurrency: 1, perSecond: 1, scope: 'provider:microsoft' });
    expect(g.limits('ip2', OUTLOOK, t0)).toBeUndefined();
    expect(g.limits('ip1', OUTLOOK, t0 + 30 * 60_000)).toBeUndefined();
  });

  it('finds the provider by the MX host of the attempt while the site is still the recipient domain', () => {
    const g = gate();
    const t0 = clock.now();
    g.observe(attempt('ip1', 'yahoo.com'), deferred(TSS04, 421, '4.7.0', 'mta5.am0.yahoodns.net'), t0, t0);
    expect(g.check('ip1', YAHOO, t0)).toBeDefined();
  });

  it('extends on a repeated match, never stacks, and logs the change once', () => {
    const g = gate();
    const t0 = clock.now();
    g.observe(attempt('ip1', YAHOO), deferred(TSS04, 421, '4.7.0'), t0, t0);
    clock.advance(HOUR);
    g.observe(attempt('ip1', YAHOO), deferred(TSS04, 421, '4.7.0'), clock.now(), clock.now());
    expect(g.check('ip1', YAHOO, clock.now())!.until).toBe(t0 + 3 * HOUR);
    expect(messages(40)).toHaveLength(1);
  });

  it('leaves a successful or unmatched attempt alone', () => {
    const g = gate();
    const t0 = clock.now();
    g.observe(attempt('ip1', YAHOO), { recipients: [], tls: true, smtpCode: 250, response: '250 ok [TSS04]' }, t0, t0);
    g.observe(attempt('ip1', YAHOO), deferred('451 4.3.0 Mail server temporarily rejected message.', 451, '4.3.0'), t0, t0);
    expect(g.check('ip1', YAHOO, t0)).toBeUndefined();
    expect(lines).toEqual([]);
  });

  it('reaches another node’s gate through the coordination at its next refresh, and an operator can lift it', async () => {
    const seen = gate();
    const other = gate();
    await other.start();
    const t0 = clock.now();
    seen.observe(attempt('ip1', OUTLOOK), deferred('451 4.7.650 The mail server [127.0.0.2] has been temporarily rate limited due to IP reputation.', 451, '4.7.650'), t0, t0);
    await waitFor(async () => (await coordination.entries('source-shaping').list(clock.now())).length === 1, { what: 'the shaping written' });
    expect(other.limits('ip1', OUTLOOK, t0)).toBeUndefined();
    clock.advance(REFRESH_EVERY_MS);
    await waitFor(() => other.limits('ip1', OUTLOOK, clock.now()) !== undefined, { what: 'the other gate’s refresh' });
    expect(await other.view('ip1', clock.now())).toEqual({
      active: [{ site: 'provider:microsoft', triggeredBy: OUTLOOK, rule: 'microsoft-ip-reputation', action: { kind: 'ceiling', concurrency: 1, perSecond: 1 }, since: new Date(t0).toISOString(), until: new Date(t0 + 30 * 60_000).toISOString() }],
    });
    expect(await other.lift('ip1', 'provider:microsoft')).toBe(true);
    expect(other.limits('ip1', OUTLOOK, clock.now())).toBeUndefined();
    await seen.refresh();
    expect(seen.limits('ip1', OUTLOOK, clock.now())).toBeUndefined();
    expect(await other.lift('ip1', 'provider:microsoft')).toBe(false);
    expect(messages(30)).toEqual(['automatic shaping lifted by an operator']);
  });

  it('applies the operator’s rule first and keeps its change at the one site of its suffixes', () => {
    const g = gate(compileShapingRules({ rules: [{ id: 'orange-rl', suffixes: ['orange.fr'], match: 'OFR004_104', action: 'suspend', duration: '30m' }], disable: [] }));
    const t0 = clock.now();
    g.observe(attempt('ip1', 'smtp-in.orange.fr'), deferred('421 4.2.1 Service refuse. Veuillez essayer plus tard. OFR004_104 [104]', 421, '4.2.1'), t0, t0);
    expect(g.check('ip1', 'smtp-in.orange.fr', t0)?.reason).toMatch(/orange-rl suspended ip1 at smtp-in.orange.fr/);
    expect(g.check('ip1', 'smtp-in2.orange.fr', t0)).toBeUndefined();
  });
});
