/**
 * The components wired to the coordination port (issue 31): delivery wakes on the 'queue' topic
 * and leases under the node's id, its start takes back the leases its node wrote as 'local'
 * before the data folder had a node id (the upgrade path; the daemon does it for LMDB), and the
 * API's limits are the coordination's, so two HTTP servers given one coordination count one
 * budget, as two nodes of a cluster must. The test engine's store in a temp folder; fake clocks
 * for the dispatcher, no sleeps.
 */
import net from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { bootstrapIfEmpty } from '../../src/bootstrap.js';
import { loadConfig } from '../../src/config/load.js';
import { LocalCoordination } from '../../src/coordination/local.js';
import { Daemon } from '../../src/daemon.js';
import type { AttemptFn } from '../../src/delivery/attempt.js';
import { DeliveryService } from '../../src/delivery/dispatcher.js';
import type { AttemptResult } from '../../src/domain/delivery-result.js';
import { HttpServer, type RouteModule } from '../../src/http/server.js';
import { createLogger, type Logger } from '../../src/log/logger.js';
import type { LeasedJob } from '../../src/store/port/queue.js';
import { deliveryConfig, openTestStore, queueMessage, silentLogger, type TestStore } from '../support/delivery.js';
import { startDnsServer, type TestDns } from '../support/dns-server.js';
import { FakeClock } from '../support/fake-clock.js';
import { openStore, TEST_STORE_ENGINE, testStoreOverrides } from '../support/store.js';
import { waitFor } from '../support/wait.js';

let t: TestStore | undefined;
let service: DeliveryService | undefined;
let servers: HttpServer[] = [];
let daemon: Daemon | undefined;
let dns: TestDns | undefined;

afterEach(async () => {
  await service?.stop();
  await Promise.all(servers.map((s) => s.stop()));
  await daemon?.stop();
  await dns?.close();
  await t?.close();
  service = t = daemon = dns = undefined;
  servers = [];
});

const noDns = { mx: async () => ({ status: 'nxdomain' as const }), a: async () => ({ status: 'nxdomain' as const }), aaaa: async () => ({ status: 'nxdomain' as const }) };
const LEASE_MS = 30 * 60_000;

function delivered(recipients: readonly string[]): AttemptResult {
  return {
    recipients: recipients.map((recipient) => ({ recipient, outcome: 'delivered', category: 'other', phase: 'message', smtpCode: 250, response: '250 2.0.0 OK' })),
    tls: false,
    smtpCode: 250,
    response: '250 2.0.0 OK',
  };
}

/** An attempt that delivers and notes the lease each job was attempted under. */
function recordingAttempt(): { attempt: AttemptFn; owners: string[] } {
  const owners: string[] = [];
  const attempt: AttemptFn = async ({ job }) => {
    owners.push((job as LeasedJob).leaseOwner);
    return delivered(job.recipients);
  };
  return { attempt, owners };
}

async function jobOf(store: TestStore['store'], messageId: string) {
  return (await store.queue.jobsOfMessage(messageId))[0];
}

/** A logger that keeps its lines; `recovered()` reads the start's "leases recovered" line (the port's jobs do not show a lease's owner). */
function recordingLogger(): { logger: Logger; recovered: () => number | undefined } {
  const lines: Array<{ msg: string; recovered?: number }> = [];
  const logger = createLogger({ level: 'info', destination: { write: (line: string) => void lines.push(JSON.parse(line) as { msg: string }) } });
  return { logger, recovered: () => lines.find((l) => l.msg === 'delivery leases recovered from a previous run')?.recovered };
}

describe('delivery on the coordination', () => {
  it('starts a job committed while it sleeps on a "queue" wake-up, under the node’s id, not at its idle check', async () => {
    t = await openTestStore();
    const clock = new FakeClock();
    const coordination = new LocalCoordination({ nodeId: 'node-a', clock });
    const { attempt, owners } = recordingAttempt();
    service = new DeliveryService({ store: t.store, coordination, config: deliveryConfig(), resolver: noDns, logger: silentLogger(), clock, attempt });
    await service.start();
    // Its first round found nothing and sleeps until the idle check, which the fake clock never reaches.
    await waitFor(() => clock.nextTimerAt() !== undefined, { what: 'the dispatcher to sleep' });

    const id = await queueMessage(t.store, { to: ['ann@wake-mail.net'], now: new Date(clock.now()) });
    coordination.wake('queue'); // what the send path does after its commit (daemon.ts)
    await waitFor(async () => (await jobOf(t!.store, id))?.state === 'done', { what: 'the job to be delivered' });
    expect(owners).toEqual(['node-a']);
  });

  it('takes back at start the leases its node wrote as "local" (formerNodeIds), and leaves another node’s live lease alone', async () => {
    t = await openTestStore();
    const clock = new FakeClock();
    const now = new Date(clock.now());
    const mine = await queueMessage(t.store, { to: ['a@one-mail.net'], now });
    const others = await queueMessage(t.store, { to: ['b@two-mail.net'], now });
    // Leased by this node's previous run before it had a node id, and by another live node.
    await t.store.queue.lease({ owner: 'local', nowMs: clock.now(), max: 1, leaseMs: LEASE_MS, accept: (j) => j.messageId === mine });
    await t.store.queue.lease({ owner: 'node-b', nowMs: clock.now(), max: 1, leaseMs: LEASE_MS, accept: (j) => j.messageId === others });

    const { attempt, owners } = recordingAttempt();
    const { logger, recovered } = recordingLogger();
    const coordination = new LocalCoordination({ nodeId: 'node-a', clock });
    service = new DeliveryService({ store: t.store, coordination, formerNodeIds: ['local'], config: deliveryConfig(), resolver: noDns, logger, clock, attempt });
    await service.start();
    expect(recovered()).toBe(1);
    await waitFor(async () => (await jobOf(t!.store, mine))?.state === 'done', { what: 'the recovered job to be delivered' });
    expect(owners).toEqual(['node-a']);
    // node-b's lease, live for 30 minutes of the fake clock, is node-b's.
    expect(await jobOf(t.store, others)).toMatchObject({ state: 'leased' });
  });

  it('without former ids, leaves a "local" lease to its expiry (what formerNodeIds is for)', async () => {
    t = await openTestStore();
    const clock = new FakeClock();
    const id = await queueMessage(t.store, { to: ['a@one-mail.net'], now: new Date(clock.now()) });
    await t.store.queue.lease({ owner: 'local', nowMs: clock.now(), max: 1, leaseMs: LEASE_MS });
    const { logger, recovered } = recordingLogger();
    const coordination = new LocalCoordination({ nodeId: 'node-a', clock });
    service = new DeliveryService({ store: t.store, coordination, config: deliveryConfig(), resolver: noDns, logger, clock, attempt: recordingAttempt().attempt });
    await service.start();
    expect(recovered()).toBeUndefined();
    expect(await jobOf(t.store, id)).toMatchObject({ state: 'leased' });
  });

  // Only LMDB folders predate node ids: the PostgreSQL store never had "local" leases (daemon.ts gives it no former ids).
  it.skipIf(TEST_STORE_ENGINE !== 'lmdb')('the daemon on an LMDB folder takes back at its first start the leases written as "local" before the folder had a node id', async () => {
    t = await openTestStore();
    dns = await startDnsServer();
    await queueMessage(t.store, { to: ['a@upgrade-mail.net'] });
    await t.store.queue.lease({ owner: 'local', nowMs: Date.now(), max: 1, leaseMs: LEASE_MS });
    await t.store.stop();
    const config = loadConfig({
      env: {},
      overrides: { dataDir: t.dataDir, ...testStoreOverrides(t.dataDir), 'http.port': 0, 'log.level': 'silent', 'smtp.enabled': false, 'delivery.enabled': true, 'dns.servers': [dns.address] },
    });
    const { logger, recovered } = recordingLogger();
    daemon = new Daemon(config, logger);
    expect(daemon.coordination.nodeId).not.toBe('local');
    await daemon.start();
    // Taken back during start, not left leased for 30 minutes.
    expect(recovered()).toBe(1);
    await daemon.stop();
    daemon = undefined;
    // t.close() stops the store it holds: one open again on the folder, which it then removes.
    t.store = await openStore(t.dataDir);
  });
});

describe('API limits on the coordination', () => {
  /** Two HTTP servers on one store, given `coordination` (each its own when absent), with one authenticated route. */
  async function twoServers(o: { shared: boolean }) {
    t = await openTestStore();
    const creds = (await bootstrapIfEmpty(t.store, t.dataDir))!;
    const config = loadConfig({ env: {}, overrides: { dataDir: t.dataDir, 'http.port': 0, 'log.level': 'silent', 'api.rateLimit': 3, 'api.authFailureLimit': 2 } });
    const routes: RouteModule[] = [(app) => app.get('/whoami', async (req) => ({ keyId: req.principal.keyId }))];
    const shared = new LocalCoordination({ nodeId: 'node-a' });
    servers = [0, 1].map(() => new HttpServer({ config, store: t!.store, coordination: o.shared ? shared : new LocalCoordination({ nodeId: 'node-a' }), logger: silentLogger() }, routes));
    for (const s of servers) await s.start();
    const get = (i: number, key: string) => fetch(`http://127.0.0.1:${servers[i % 2].port}/whoami`, { headers: { authorization: `Bearer ${key}` } });
    return { apiKey: creds.apiKey, get };
  }

  it('holds one API key to api.rateLimit across two HTTP servers given the same coordination, with the same 429 and headers', async () => {
    const { apiKey, get } = await twoServers({ shared: true });
    for (let i = 0; i < 3; i++) {
      const res = await get(i, apiKey);
      expect(res.status).toBe(200);
      expect(res.headers.get('ratelimit-remaining')).toBe(String(2 - i));
    }
    const refused = await get(3, apiKey);
    expect(refused.status).toBe(429);
    expect(refused.headers.get('ratelimit-limit')).toBe('3');
    expect(refused.headers.get('ratelimit-remaining')).toBe('0');
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(await refused.json()).toMatchObject({ code: 'rate_limit_exceeded', status: 429 });
  });

  it('counts invalid keys from one address across both servers too', async () => {
    const { get } = await twoServers({ shared: true });
    expect((await get(0, 'pr_live_nope')).status).toBe(401);
    expect((await get(1, 'pr_live_nope')).status).toBe(401);
    const refused = await get(2, 'pr_live_nope');
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
  });

  it('does not count an invalid key whose client hung up before it was refused (a gone client has no address to count under)', async () => {
    t = await openTestStore();
    const config = loadConfig({ env: {}, overrides: { dataDir: t.dataDir, 'http.port': 0, 'log.level': 'silent', 'api.authFailureLimit': 2 } });
    // The key lookup waits until the client has gone (on PostgreSQL it takes a round trip, long enough).
    let looked!: () => void;
    let release!: () => void;
    let answered!: () => void;
    const lookedUp = new Promise<void>((resolve) => (looked = resolve));
    const gate = new Promise<void>((resolve) => (release = resolve));
    const refused = new Promise<void>((resolve) => (answered = resolve));
    const store = t.store;
    const apiKeys = new Proxy(store.apiKeys, {
      get: (target, p) =>
        p === 'findByToken'
          ? async (token: string) => {
              looked();
              await gate;
              return target.findByToken(token).finally(answered);
            }
          : Reflect.get(target, p, target),
    });
    const gatedStore = new Proxy(store, { get: (target, p) => (p === 'apiKeys' ? apiKeys : Reflect.get(target, p, target)) });
    // The keys the invalid-key limit is asked about: the PostgreSQL coordination refuses any but a string.
    const counted: unknown[] = [];
    const local = new LocalCoordination({ nodeId: 'node-a' });
    const coordination = new Proxy(local, {
      get: (target, p) =>
        p === 'keyedRate'
          ? (name: string, o: Parameters<LocalCoordination['keyedRate']>[1]) => {
              const rate = target.keyedRate(name, o);
              return { take: (key: string) => (name === 'auth-failures' && counted.push(key), rate.take(key)) };
            }
          : Reflect.get(target, p, target),
    });
    const errors: string[] = [];
    const logger = createLogger({ level: 'error', destination: { write: (line: string) => void errors.push(line) } });
    const server = new HttpServer({ config, store: gatedStore, coordination, logger }, [(app) => app.get('/whoami', async () => ({}))]);
    servers = [server];
    await server.start();

    const socket = net.connect(server.port, '127.0.0.1');
    await new Promise<void>((resolve) => socket.once('connect', resolve));
    socket.write('GET /whoami HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer pr_live_gone\r\n\r\n');
    await lookedUp;
    socket.destroy();
    await new Promise((resolve) => setTimeout(resolve, 100)); // the server sees the close
    release();
    await refused;
    await new Promise((resolve) => setTimeout(resolve, 50)); // its refusal, counted or not
    // A later request with an invalid key is counted under its address, and refused as before.
    const res = await fetch(`http://127.0.0.1:${server.port}/whoami`, { headers: { authorization: 'Bearer pr_live_nope' } });
    expect(res.status).toBe(401);
    expect(counted).toEqual(['127.0.0.1']);
    expect(errors).toEqual([]);
  });

  it('counts per server when each has a coordination of its own (what sharing one changes)', async () => {
    const { apiKey, get } = await twoServers({ shared: false });
    for (let i = 0; i < 4; i++) expect((await get(i, apiKey)).status).toBe(200);
  });
});
