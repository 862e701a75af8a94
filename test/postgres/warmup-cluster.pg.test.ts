/**
 * The warm-up gate of three nodes of one cluster (issue 35): each node's WarmupGate on its own
 * PostgresCoordination, reserving at once for one warming source and one provider. Together
 * they carry exactly the hour's cap, each learns the key is full when the coordination says so,
 * and the next hour opens again on every node.
 */
import { afterEach, beforeEach, expect, it } from 'vitest';
import { WarmupGate } from '../../src/delivery/warmup-gate.js';
import { resolveSendingIps } from '../../src/domain/sending-ips.js';
import { FakeClock } from '../support/fake-clock.js';
import { PgCluster } from '../support/pg-coordination.js';

const GMAIL = 'alt1.gmail-smtp-in.l.google.com,gmail-smtp-in.l.google.com';
let cluster: PgCluster;
beforeEach(() => {
  cluster = new PgCluster();
});
afterEach(async () => {
  await cluster.dispose();
});

it('holds a warming source’s cap for the whole cluster, not per node', async () => {
  const clock = new FakeClock();
  const schema = cluster.freshSchema();
  // Day 1: 60 a day, 10 an hour.
  const ips = resolveSendingIps({ sources: [{ name: 'new', address: '127.0.0.2', warmup: { start: '2025-01-06', curve: [60] } }], pools: {}, defaultPools: { transactional: '', broadcast: '' } }, 'mta.example');
  const gates = await Promise.all([1, 2, 3].map(async () => new WarmupGate({ ips, coordination: await cluster.node(schema, clock) })));
  const attempt = { source: 'new', site: GMAIL, pool: 'default', domain: 'gmail.com' };
  const race = () => Promise.all(Array.from({ length: 30 }, (_, i) => gates[i % 3]!.reserve(attempt, clock.now())));
  expect((await race()).filter(Boolean)).toHaveLength(10);
  for (const g of gates) expect(g.check('new', GMAIL, clock.now())?.until).toBe(Date.UTC(2025, 0, 6, 10));
  clock.advance(3_600_000);
  expect((await race()).filter(Boolean)).toHaveLength(10);
  expect((await gates[2]!.view('new', clock.now()))!.sites[0]).toEqual({ key: 'google', curve: 'google', today: { sent: 20, cap: 60 }, thisHour: { sent: 10, cap: 10 } });
});
