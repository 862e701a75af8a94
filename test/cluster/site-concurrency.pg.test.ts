/**
 * Per-site concurrency across nodes (issue 32, delivery/cluster-sites.ts): two delivery
 * dispatchers, each with its own PostgreSQL store connection and coordination node on one
 * schema, deliver to one MX that holds every DATA reply (support/gate-mx.ts). With
 * delivery.perDomainConcurrency 2, each node alone would open 2 sessions, 4 together; the shared
 * slots keep the cluster at 2 while the other attempts wait for a hold.
 *
 * No sleeping: node A's two sessions are held at the MX first; node B then starts its own two,
 * and the test waits until both have been refused a hold (counted by a wrapper around the real
 * PostgreSQL slots) before it looks at the MX again.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PostgresCoordination } from '../../src/coordination/postgres/index.js';
import type { SlotHold, Slots } from '../../src/coordination/port.js';
import { DeliveryService, LEASE_AHEAD_PER_SLOT } from '../../src/delivery/dispatcher.js';
import type { DnsResolver } from '../../src/dns/resolver.js';
import { PostgresStore } from '../../src/store/postgres/engine.js';
import { allSent, deliveryConfig, queueMessage, silentLogger } from '../support/delivery.js';
import { routeTo } from '../support/delivery-rig.js';
import { startDnsServer, testResolver, type TestDns } from '../support/dns-server.js';
import { startGateMx, type GateMx } from '../support/gate-mx.js';
import { PgCluster } from '../support/pg-coordination.js';
import { waitFor } from '../support/wait.js';

const DOMAIN = 'cluster-gate.net';
const LIMIT = 2;
/** The restart test's own domain, MX and site limit. */
const RESTART_DOMAIN = 'cluster-restart.net';
const RESTART_LIMIT = 3;

/** The real slots, with a count of the holds they refused. */
function counting(slots: Slots): Slots & { refused: number } {
  const c = {
    refused: 0,
    async acquire(key: string, limit: number): Promise<SlotHold | null> {
      const hold = await slots.acquire(key, limit);
      if (!hold) c.refused++;
      return hold;
    },
    held: (key: string) => slots.held(key),
  };
  return c;
}

interface Node {
  store: PostgresStore;
  coordination: PostgresCoordination;
  slots: Slots & { refused: number };
  delivery: DeliveryService;
}

let cluster: PgCluster;
let dns: TestDns;
let resolver: DnsResolver;
let gate: GateMx;
let restartGate: GateMx;
let schema: string;
const nodes: Node[] = [];

async function startNode(o: { limit: number; port: number } = { limit: LIMIT, port: 0 }): Promise<Node> {
  const store = new PostgresStore({ url: cluster.url, schema, poolSize: 3 });
  await store.start();
  const coordination = await cluster.node(schema);
  const slots = counting(coordination.slots('mx-site'));
  const delivery = new DeliveryService({
    store,
    coordination,
    siteSlots: slots,
    // A long grace period: stop() must not wait for attempts that only wait for a hold.
    config: deliveryConfig({ 'delivery.port': o.port || gate.port, 'delivery.rate': 1000, 'delivery.perDomainConcurrency': o.limit, 'shutdown.graceMs': 60_000 }),
    resolver,
    logger: silentLogger(),
  });
  const node = { store, coordination, slots, delivery };
  nodes.push(node);
  return node;
}

beforeAll(async () => {
  cluster = new PgCluster();
  schema = cluster.freshSchema();
  dns = await startDnsServer();
  resolver = testResolver(dns, { cache: true });
  gate = await startGateMx('127.0.36.2');
  routeTo(dns, DOMAIN, '127.0.36.2');
  restartGate = await startGateMx('127.0.36.3');
  routeTo(dns, RESTART_DOMAIN, '127.0.36.3');
});

afterAll(async () => {
  gate?.open();
  restartGate?.open();
  for (const n of nodes) {
    await n.delivery.stop();
    await n.store.stop();
  }
  await cluster?.dispose();
  resolver?.stop();
  await Promise.all([dns?.close(), gate?.close(), restartGate?.close()]);
});

describe('per-site concurrency across nodes', () => {
  it('keeps two nodes within one site budget, and a node stops at once while its attempts wait for a hold', { timeout: 45_000 }, async () => {
    const [a, b] = [await startNode(), await startNode()];
    // Each node learns the site of the domain by a delivery of its own (its first MX lookup),
    // so that both count under the site, not the domain's name, in what follows.
    gate.open();
    for (const node of [a, b]) {
      const id = await queueMessage(node.store, { to: [`warm@${DOMAIN}`] });
      await node.delivery.start();
      await waitFor(() => allSent(node.store, [id]), { what: 'the warm-up message' });
      await node.delivery.stop();
    }
    expect(a.delivery.siteOf(DOMAIN)).not.toBe(DOMAIN);
    expect(b.delivery.siteOf(DOMAIN)).toBe(a.delivery.siteOf(DOMAIN));

    gate.reset();
    // Each node leases 2 to start and LEASE_AHEAD_PER_SLOT per slot ahead: enough for both.
    const ids: string[] = [];
    const total = 2 * LIMIT * (1 + LEASE_AHEAD_PER_SLOT);
    for (let i = 0; i < total; i++) ids.push(await queueMessage(a.store, { to: [`r${i}@${DOMAIN}`] }));
    await a.delivery.start();
    await waitFor(() => gate.held === LIMIT && a.delivery.inFlightCount === LIMIT, { what: "A's two sessions at the MX" });
    // B, alone, would open its own 2 sessions: it starts them, but each waits for a hold.
    await b.delivery.start();
    await waitFor(() => b.delivery.inFlightCount === LIMIT && b.slots.refused >= LIMIT, { what: "B's two attempts refused a hold" });
    expect(gate.held).toBe(LIMIT);
    expect(gate.maxHeld).toBe(LIMIT);
    expect(await b.coordination.slots('mx-site').held(b.delivery.siteOf(DOMAIN))).toBe(LIMIT);

    // B stops at once (not after its 60 s grace period): its waiting attempts and the jobs it
    // leased ahead go back to the queue, and A delivers everything.
    await b.delivery.stop();
    gate.open();
    await waitFor(() => allSent(a.store, ids), { what: `all ${total} messages`, timeout: 30_000 });
    expect(gate.maxHeld).toBe(LIMIT);
    expect(new Set(gate.received).size).toBe(total);
    await waitFor(async () => (await a.coordination.slots('mx-site').held(a.delivery.siteOf(DOMAIN))) === 0, { what: 'every hold given back' });
  });

  it("moves a restarted node's first attempt to the site's hold before it connects: the site never gets a session more", { timeout: 45_000 }, async () => {
    const opts = { limit: RESTART_LIMIT, port: restartGate.port };
    const a = await startNode(opts);
    // A knows the site (its first MX lookup); B is a node restarted since: it has not looked the
    // domain up, so its first attempt takes its hold under the domain's name.
    restartGate.open();
    const warm = await queueMessage(a.store, { to: [`warm@${RESTART_DOMAIN}`] });
    await a.delivery.start();
    await waitFor(() => allSent(a.store, [warm]), { what: 'the warm-up message' });
    await a.delivery.stop();
    const b = await startNode(opts);
    const site = a.delivery.siteOf(RESTART_DOMAIN);
    expect(site).not.toBe(RESTART_DOMAIN);
    expect(b.delivery.siteOf(RESTART_DOMAIN)).toBe(RESTART_DOMAIN);

    restartGate.reset();
    const ids: string[] = [];
    const total = 2 * RESTART_LIMIT * (1 + LEASE_AHEAD_PER_SLOT);
    for (let i = 0; i < total; i++) ids.push(await queueMessage(a.store, { to: [`r${i}@${RESTART_DOMAIN}`] }));
    await a.delivery.start();
    await waitFor(() => restartGate.held === RESTART_LIMIT && a.delivery.inFlightCount === RESTART_LIMIT, { what: "A's sessions at the MX, the site's limit" });
    // B's first attempt looks the domain up, learns the site, and waits for a hold of it with the
    // attempts B then plans against the site: all refused while A holds the site's limit. Before
    // the fix, that first attempt connected with its hold under the domain's name: one too many.
    await b.delivery.start();
    await waitFor(() => restartGate.held > RESTART_LIMIT || (b.delivery.inFlightCount === RESTART_LIMIT && b.slots.refused >= RESTART_LIMIT), {
      what: "B's attempts refused a hold of the site",
    });
    expect(b.delivery.siteOf(RESTART_DOMAIN)).toBe(site);
    expect(restartGate.held).toBe(RESTART_LIMIT);
    expect(await b.coordination.slots('mx-site').held(site)).toBe(RESTART_LIMIT);

    // B stops at once; its waiting attempts go back to the queue unattempted, and A delivers everything.
    await b.delivery.stop();
    restartGate.open();
    await waitFor(() => allSent(a.store, ids), { what: `all ${total} messages`, timeout: 30_000 });
    expect(restartGate.maxHeld).toBe(RESTART_LIMIT);
    expect(new Set(restartGate.received).size).toBe(total);
    await waitFor(async () => (await a.coordination.slots('mx-site').held(site)) === 0 && (await a.coordination.slots('mx-site').held(RESTART_DOMAIN)) === 0, { what: 'every hold given back' });
  });
});
