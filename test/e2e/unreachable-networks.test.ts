/**
 * `postrider serve` in a network namespace of the test's own, where the peers a recipient domain
 * or a webhook names cannot be reached: an IPv6 address without any IPv6 route (connect() fails
 * with ENETUNREACH, as on an IPv4-only server), a blackhole route (EINVAL) and an unreachable
 * route (EHOSTUNREACH). Such failures happen inside connect() itself; a webhook on such a host
 * used to raise an uncaught 'error' that ended the daemon, and every restart died again on the
 * same queued event. Here each failure must end as a recorded, retried attempt while the daemon
 * keeps running, and a reachable address after unreachable ones must still be used.
 *
 * The daemon's first DNS server has no route either, so every query fails over to the second.
 * Nothing leaves the machine: the namespace has only `lo` and the routes added here; the test's
 * DNS server, MX and webhook receiver run on loopback and are bridged into it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ChildDaemon } from '../support/child-daemon.js';
import { failedWebhookAttempts, sendOne } from '../support/child-sends.js';
import { freePort } from '../support/cli.js';
import { startDnsServer, type TestDns } from '../support/dns-server.js';
import { startMxServer, type MxServer } from '../support/mx-server.js';
import { NetNs, netnsUnavailable } from '../support/netns.js';
import { setupSender, type Sender } from '../support/sending.js';
import { TEST_STORE_ENGINE } from '../support/store.js';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver.js';

// On PostgreSQL the daemon in the namespace could not reach the test cluster on the host's
// 127.0.0.1; what is tested here is networking, not the store.
const unavailable = TEST_STORE_ENGINE !== 'lmdb' ? 'the test PostgreSQL is not reachable from the namespace' : await netnsUnavailable();

const MX_ADDRESS = '127.0.30.2';
/** No route at all in the namespace (only lo exists). */
const NO_ROUTE_V6 = '2001:db8::1';
const NO_ROUTE_DNS = '2001:db8::53';
/** Routes added below. */
const BLACKHOLE_V6 = '2001:db8:1::1';
const BLACKHOLE_V4 = '198.51.100.7';
const UNREACHABLE_V4 = '203.0.113.7';

let ns: NetNs;
let dns: TestDns;
let rx: WebhookReceiver;
let mx: MxServer;
let d: ChildDaemon;
let s: Sender;

const failedAttempts = (webhookId: string) => failedWebhookAttempts(d, webhookId);
const send = (to: string) => sendOne(d, s, to);

async function createHook(url: string): Promise<string> {
  const res = await d.api('POST', '/webhooks', { body: { url, events: ['accepted'], channelId: s.channelId } });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.id;
}

beforeAll(async () => {
  if (unavailable) return;
  [dns, rx, mx] = await Promise.all([startDnsServer(), startWebhookReceiver(), startMxServer({ address: MX_ADDRESS })]);
  ns = await NetNs.create();
  await ns.route('-6', 'blackhole', '2001:db8:1::/48');
  await ns.route('blackhole', '198.51.100.0/24');
  await ns.route('unreachable', '203.0.113.0/24');
  d = new ChildDaemon({
    netns: ns,
    env: {
      POSTRIDER_LOG_LEVEL: 'info',
      // The first DNS server has no route either: every query must fail over to the second.
      POSTRIDER_DNS_SERVERS: `[${NO_ROUTE_DNS}]:53,${dns.address}`,
      POSTRIDER_WEBHOOKS_ALLOW_HTTP: 'true',
      POSTRIDER_WEBHOOKS_ALLOW_PRIVATE: 'true',
      POSTRIDER_WEBHOOKS_RETRY_BASE_MS: '200ms',
      POSTRIDER_WEBHOOKS_TIMEOUT_MS: '5s',
      POSTRIDER_DELIVERY_ENABLED: 'true',
      POSTRIDER_DELIVERY_PORT: String(mx.port),
      POSTRIDER_DELIVERY_ALLOW_PRIVATE: 'true',
      POSTRIDER_DELIVERY_RETRY_SCHEDULE: '1s*',
    },
  });
  d.httpPort = await freePort();
  await ns.bridge([
    { proto: 'tcp', toward: 'ns', host: '127.0.0.1', port: d.httpPort },
    { proto: 'udp', toward: 'host', host: '127.0.0.1', port: dns.port },
    { proto: 'tcp', toward: 'host', host: '127.0.0.1', port: dns.port },
    { proto: 'tcp', toward: 'host', host: '127.0.0.1', port: rx.port },
    { proto: 'tcp', toward: 'host', host: MX_ADDRESS, port: mx.port },
  ]);
  await d.start();
  s = await setupSender(d, dns);
}, 60_000);

afterAll(async () => {
  await d?.close();
  await ns?.remove();
  await Promise.all([dns?.close(), rx?.close(), mx?.close()]);
});

describe.skipIf(unavailable !== null)('unreachable peers in a network namespace', () => {
  it('asks the next DNS server when the first has no route, and gets its real answers', async () => {
    // NXDOMAIN from the test server (not a lookup error, which a webhook create would let pass).
    const res = await d.api('POST', '/webhooks', { body: { url: 'http://missing.hooks.test/x', events: ['accepted'] } });
    expect(res.status).toBe(422);
    expect(res.body.errors['/url'].map((e: { code: string }) => e.code)).toEqual(['unresolvable_host']);
  });

  it('keeps running when a webhook host resolves only to an IPv6 address without a route, and retries it', async () => {
    dns.set('v6only.hooks.test', 'AAAA', [NO_ROUTE_V6]);
    const id = await createHook(`http://v6only.hooks.test:${rx.port}/v6only`);
    await send('ann@example.net');
    const failures = await d.whileAlive(() => {
      const f = failedAttempts(id);
      return f.length >= 2 ? f : null;
    }, { what: 'two failed attempts' });
    expect(failures[0].error).toBe(`request failed: connect failed: [${NO_ROUTE_V6}]:${rx.port} ENETUNREACH`);
    expect(failures.map((f) => f.attempt).slice(0, 2)).toEqual([1, 2]);
    const hook = await d.api('GET', `/webhooks/${id}`);
    expect(hook.body.lastResponse).toMatchObject({ statusCode: null, error: expect.stringContaining('ENETUNREACH') });
    expect(rx.at('/v6only')).toHaveLength(0);
    expect((await d.api('GET', '/ready')).status).toBe(200);
  });

  it('tries every address of a webhook host in order and posts to the first that answers', async () => {
    dns.set('mixed.hooks.test', 'A', [BLACKHOLE_V4, UNREACHABLE_V4, '127.0.0.1']);
    dns.set('mixed.hooks.test', 'AAAA', [BLACKHOLE_V6]);
    await createHook(`http://mixed.hooks.test:${rx.port}/mixed`);
    await send('bob@example.net');
    await d.whileAlive(() => rx.at('/mixed').length > 0, { what: 'the webhook request' });
    expect(rx.at('/mixed')[0].json).toMatchObject({ eventType: 'accepted' });
  });

  it('keeps running when a webhook host has only blackholed and unreachable addresses, naming each failure', async () => {
    dns.set('dark.hooks.test', 'A', [BLACKHOLE_V4, UNREACHABLE_V4]);
    dns.set('dark.hooks.test', 'AAAA', [BLACKHOLE_V6]);
    const id = await createHook(`http://dark.hooks.test:${rx.port}/dark`);
    await send('cid@example.net');
    const [failure] = await d.whileAlive(() => (failedAttempts(id).length > 0 ? failedAttempts(id) : null), { what: 'a failed attempt' });
    const port = rx.port;
    expect(failure.error).toBe(`request failed: connect failed: ${BLACKHOLE_V4}:${port} EINVAL; ${UNREACHABLE_V4}:${port} EHOSTUNREACH; [${BLACKHOLE_V6}]:${port} EINVAL`);
  });

  it('defers mail for a domain whose MX has only an address family without a route, with the reason', async () => {
    dns.set('v6only.example.net', 'MX', ['10 mx.v6only.example.net']);
    dns.set('mx.v6only.example.net', 'AAAA', [NO_ROUTE_V6]);
    const messageId = await send('dan@v6only.example.net');
    const attempts = await d.whileAlive(async () => {
      const res = await d.api('GET', `/activity/messages/${messageId}`);
      return res.body.attempts?.length >= 2 ? res.body.attempts : null;
    }, { what: 'two deferred attempts' });
    expect(attempts[0]).toMatchObject({ outcome: 'deferred', mx: 'mx.v6only.example.net' });
    expect(attempts[0].response).toContain('ENETUNREACH');
    expect((await d.api('GET', '/ready')).status).toBe(200);
  });

  it('delivers to the reachable address of an MX after blackholed and unreachable ones', async () => {
    dns.set('mixed.example.net', 'MX', ['10 mx.mixed.example.net']);
    dns.set('mx.mixed.example.net', 'A', [BLACKHOLE_V4, UNREACHABLE_V4, MX_ADDRESS]);
    dns.set('mx.mixed.example.net', 'AAAA', [BLACKHOLE_V6]);
    const messageId = await send('eve@mixed.example.net');
    const attempts = await d.whileAlive(async () => {
      const res = await d.api('GET', `/activity/messages/${messageId}`);
      return res.body.attempts?.length >= 1 ? res.body.attempts : null;
    }, { what: 'the delivery' });
    expect(attempts[0]).toMatchObject({ outcome: 'delivered' });
    expect(mx.received.some((m) => m.to.includes('eve@mixed.example.net'))).toBe(true);
  });
});
