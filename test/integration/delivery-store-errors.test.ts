/**
 * A store error whose outcome is unknown must not strand a job on a node that stays alive
 * (found by the cluster test, test/cluster/cluster.pg.test.ts: PostgreSQL crashed while a lease
 * committed, and the job stayed leased to a live node for its 30 minutes). Two ways a lease
 * is left in the store without the dispatcher holding it: the lease scan committed but its answer
 * was lost (the connection broke after COMMIT), and a leased job whose message could not be
 * loaded. In both the job goes back to the queue at the next round that reaches the store, and
 * is delivered, long before its lease would have expired. The store is the real one, with the
 * fault put in front of one verb; time is a fake clock.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { DeliveryService } from '../../src/delivery/dispatcher.js';
import type { DnsResolver } from '../../src/dns/resolver.js';
import { unavailableError } from '../../src/domain/database-unavailable.js';
import type { StorePort } from '../../src/store/port/index.js';
import { routeTo } from '../support/delivery-rig.js';
import { openTestStore, queueMessage, testDeliveryService, type TestStore } from '../support/delivery.js';
import { startDnsServer, testResolver, type TestDns } from '../support/dns-server.js';
import { FakeClock } from '../support/fake-clock.js';
import { startMxServer, type MxServer } from '../support/mx-server.js';
import { waitFor } from '../support/wait.js';

const DOMAIN = 'store-errors-mail.net';

let dns: TestDns;
let resolver: DnsResolver;
let mx: MxServer;
let t: TestStore;
let s: DeliveryService | undefined;

beforeAll(async () => {
  dns = await startDnsServer();
  resolver = testResolver(dns);
  mx = await startMxServer({ address: '127.0.20.9', starttls: false });
  routeTo(dns, DOMAIN, '127.0.20.9');
});

afterAll(async () => {
  resolver.stop();
  await Promise.all([mx.close(), dns.close()]);
});

afterEach(async () => {
  await s?.stop();
  s = undefined;
  await t?.close();
});

/** Every method of `o` bound to it, with `override` in front. */
function withOverride<T extends object>(o: T, override: Partial<T>): T {
  return new Proxy(o, {
    get(target, prop) {
      if (prop in override) return override[prop as keyof T];
      const v: unknown = Reflect.get(target, prop, target);
      return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
    },
  });
}

/** The store, with the dispatcher's view of it: `queue` and `messages` as `faults` changes them. */
function faulty(store: StorePort, faults: { queue?: Partial<StorePort['queue']>; messages?: Partial<StorePort['messages']> }): StorePort {
  return withOverride(store, {
    ...(faults.queue ? { queue: withOverride(store.queue, faults.queue) } : {}),
    ...(faults.messages ? { messages: withOverride(store.messages, faults.messages) } : {}),
  });
}

const lost = () => unavailableError(Object.assign(new Error('write CONNECTION_CLOSED'), { code: 'CONNECTION_CLOSED' }));

describe('a store error with an unknown outcome strands no job on a live node', () => {
  it('takes back a lease that committed while its answer was lost, and delivers the job', async () => {
    t = await openTestStore();
    const clock = new FakeClock();
    let armed = true;
    const store = faulty(t.store, {
      queue: {
        lease: async (req) => {
          const leased = await t.store.queue.lease(req);
          if (armed && leased.jobs.length > 0) {
            armed = false;
            throw lost();
          }
          return leased;
        },
      },
    });
    s = testDeliveryService(store, resolver, { 'delivery.port': mx.port }, { clock, idleCheckMs: 24 * 3_600_000 });
    await s.start();
    const id = await queueMessage(t.store, { to: [`ann@${DOMAIN}`], now: new Date(clock.now()) });
    s.notify();
    await waitFor(() => !armed, { what: 'the lease whose answer was lost' });
    const [job] = await t.store.queue.jobsOfMessage(id);
    expect(job.state).toBe('leased');
    // The round that failed is tried again after its back-off (seconds), not the lease's 30 minutes.
    const retryAt = await waitFor(() => clock.nextTimerAt(), { what: 'the retry of the failed round' });
    expect(retryAt - clock.now()).toBeLessThan(60_000);
    clock.advance(retryAt - clock.now());
    await waitFor(async () => (await t.store.messages.get(id))?.status === 'sent', { what: 'the delivery of the job' });
    expect(mx.received.filter((m) => m.to.includes(`ann@${DOMAIN}`))).toHaveLength(1);
  });

  it('takes back the lease of a job whose message could not be loaded, and delivers it', async () => {
    t = await openTestStore();
    const clock = new FakeClock();
    let armed = true;
    const store = faulty(t.store, {
      messages: {
        withBody: async (messageId) => {
          if (armed) {
            armed = false;
            throw lost();
          }
          return t.store.messages.withBody(messageId);
        },
      },
    });
    s = testDeliveryService(store, resolver, { 'delivery.port': mx.port }, { clock, idleCheckMs: 24 * 3_600_000 });
    await s.start();
    const id = await queueMessage(t.store, { to: [`bob@${DOMAIN}`], now: new Date(clock.now()) });
    s.notify();
    await waitFor(() => !armed, { what: 'the failed load' });
    // No time passes: the next round (the failed attempt's end kicks one) gives the lease back.
    await waitFor(async () => (await t.store.messages.get(id))?.status === 'sent', { what: 'the delivery of the job' });
    expect(mx.received.filter((m) => m.to.includes(`bob@${DOMAIN}`))).toHaveLength(1);
  });
});
