/**
 * Automatic shaping in a cluster (issue 35): two nodes, each its own PostgresCoordination and
 * ShapingGate on one schema. A [TSS04] seen by node A suspends the source on node B at B's next
 * refresh; a repeated match on B extends the one entry; an operator's lift on B ends it on A
 * too. Time moves by the fake clock (the gates' refresh timers and the coordination's queries).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AttemptResult } from '../../src/domain/delivery-result.js';
import { compileShapingRules } from '../../src/domain/shaping-match.js';
import { REFRESH_EVERY_MS, ShapingGate } from '../../src/delivery/shaping-gate.js';
import { createLogger } from '../../src/log/logger.js';
import { FakeClock } from '../support/fake-clock.js';
import { PgCluster } from '../support/pg-coordination.js';
import { waitFor } from '../support/wait.js';

const YAHOO = 'mta5.am0.yahoodns.net';
const HOUR = 3_600_000;
const TSS04 = '421 4.7.0 [TSS04] Messages from 192.0.2.10 temporarily deferred due to unexpected volume or user complaints - 4.16.55.1';
const result: AttemptResult = { recipients: [], tls: false, smtpCode: 421, enhancedCode: '4.7.0', response: TSS04 };
const attempt = { source: 'ip1', site: YAHOO, pool: 'default', domain: 'yahoo.com' };

let cluster: PgCluster;
beforeAll(() => {
  cluster = new PgCluster();
});
afterAll(async () => {
  await cluster.dispose();
});

describe('automatic shaping on PostgreSQL, two nodes', () => {
  it('honours on every node what one node saw, extends it once, and lifts it everywhere', async () => {
    const clock = new FakeClock();
    const schema = cluster.freshSchema();
    const logger = createLogger({ level: 'silent' });
    const [a, b] = await Promise.all([cluster.node(schema, clock), cluster.node(schema, clock)]);
    const gateA = new ShapingGate({ coordination: a, rules: compileShapingRules(), logger, clock });
    const gateB = new ShapingGate({ coordination: b, rules: compileShapingRules(), logger, clock });
    await Promise.all([gateA.start(), gateB.start()]);
    try {
      const t0 = clock.now();
      gateA.observe(attempt, result, t0, t0);
      expect(gateA.check('ip1', YAHOO, t0)).toBeDefined();
      await waitFor(async () => (await b.entries('source-shaping').list(clock.now())).length === 1, { what: 'the entry written' });
      clock.advance(REFRESH_EVERY_MS);
      await waitFor(() => gateB.check('ip1', YAHOO, clock.now()) !== undefined, { what: 'node B suspends ip1 at Yahoo' });
      expect(gateB.check('ip1', YAHOO, clock.now())!.until).toBe(t0 + 2 * HOUR);

      // A reply seen on B later extends the one entry.
      const t1 = clock.now();
      gateB.observe(attempt, result, t1, t1);
      await waitFor(async () => (await a.entries('source-shaping').list(clock.now()))[0]?.until === t1 + 2 * HOUR, { what: 'the entry extended' });
      expect(await a.entries('source-shaping').list(clock.now())).toHaveLength(1);

      expect(await gateB.lift('ip1', 'provider:yahoo')).toBe(true);
      clock.advance(REFRESH_EVERY_MS);
      await waitFor(() => gateA.check('ip1', YAHOO, clock.now()) === undefined, { what: 'node A lifted too' });
    } finally {
      gateA.stop();
      gateB.stop();
    }
  });
});
