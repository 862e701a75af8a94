/**
 * A missing address in a pool (issue 35, Failure), end to end on loopback: a daemon whose pool
 * holds 127.0.0.2 and 192.0.2.55 (TEST-NET-1, RFC 5737: never on this machine), weighted so the
 * missing one is picked first, a sink MX recording the peer address of each message. The health
 * gate takes the missing source out at start (its bind fails); every message reaches the sink from
 * 127.0.0.2 at its first attempt, none bounced, none lost; GET /ops/sources, /metrics and the log
 * say so. (An address lost while running shows in the attempt's result: delivery-connect-failure
 * and the gate's unit test.)
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Daemon } from '../../src/daemon.js';
import { apiRequest, type ApiOptions } from '../support/daemon.js';
import { deliverySettings, routeTo } from '../support/delivery-rig.js';
import { startDnsServer, type TestDns } from '../support/dns-server.js';
import { startMxServer, type MxServer } from '../support/mx-server.js';
import { setupSender, type Sender } from '../support/sending.js';
import { startSourcesDaemon, type SourcesDaemon } from '../support/sources-daemon.js';
import { waitFor } from '../support/wait.js';

const SINK = '127.0.39.2';
const DOMAINS = ['health-one.net', 'health-two.net'];
const MISSING = '192.0.2.55';
const MESSAGES = 30;

let dns: TestDns;
let mx: MxServer;
let daemon: Daemon;
let d: SourcesDaemon;
let sender: Sender;

const url = () => `http://127.0.0.1:${daemon.http.port}`;
const api = (method: string, urlPath: string, o: ApiOptions = {}) => apiRequest(url(), () => daemon.initialCredentials!.apiKey, method, urlPath, o);

beforeAll(async () => {
  dns = await startDnsServer();
  mx = await startMxServer({ address: SINK, starttls: false });
  for (const domain of DOMAINS) routeTo(dns, domain, SINK);
  d = await startSourcesDaemon('source-health', {
    ...deliverySettings(dns.address, mx.port),
    // A deferred message comes back within a second (the missing source's first attempt).
    'delivery.retrySchedule': '1s*',
    'delivery.sources': [
      { name: 'ip2', address: '127.0.0.2', ehloName: 'mta2.sender.test' },
      { name: 'missing', address: MISSING, ehloName: 'mta55.sender.test' },
    ],
    // The missing source first: the smooth round robin picks it at the first attempt.
    'delivery.pools': { tx: [{ source: 'missing', weight: 3 }, { source: 'ip2', weight: 1 }] },
    'delivery.defaultPools.transactional': 'tx',
  });
  daemon = d.daemon;
  sender = await setupSender({ api }, dns);
});

afterAll(async () => {
  await d?.stop();
  await Promise.all([mx?.close(), dns?.close()]);
});

describe('a source whose address is missing', () => {
  it('is taken out of its pool: every message reaches the sink from the other source, none bounced or lost, and it is reported', async () => {
    const ids: string[] = [];
    for (let i = 0; i < MESSAGES; i++) {
      const to = `r${i}@${DOMAINS[i % DOMAINS.length]}`;
      const body = { from: { email: `app@${sender.domain}` }, to: [{ email: to }], subject: `Health ${i}`, text: 'Hello' };
      const res = await api('POST', '/send/transactional', { body, headers: { 'x-service-channel-id': sender.channelId } });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      ids.push(res.body.messageId as string);
    }
    await waitFor(async () => (await Promise.all(ids.map((id) => daemon.store.messages.get(id)))).every((m) => m?.status === 'sent'), { what: `${MESSAGES} messages sent`, timeout: 30_000 });

    // Each message once, from 127.0.0.2; nothing bounced.
    expect(mx.received).toHaveLength(MESSAGES);
    expect(new Set(mx.received.map((r) => r.remoteAddress))).toEqual(new Set(['127.0.0.2']));
    expect(new Set(mx.received.map((r) => r.to[0])).size).toBe(MESSAGES);
    const events = await Promise.all(ids.map((id) => api('GET', `/activity/messages/${id}`)));
    for (const e of events) {
      expect((e.body.events as { eventType: string }[]).map((ev) => ev.eventType)).not.toContain('bounced');
      expect(e.body.statistics).toMatchObject({ delivered: 1, bounced: 0 });
    }
    // The missing address was found at start (a bind): no message was even tried from it.
    const attempts = events.flatMap((e) => e.body.attempts as { outcome: string }[]);
    expect(attempts.map((a) => a.outcome)).toEqual(Array(MESSAGES).fill('delivered'));

    const sources = await api('GET', '/ops/sources');
    expect(sources.status).toBe(200);
    const byName = new Map((sources.body.results as { name: string; health?: Record<string, unknown> }[]).map((s) => [s.name, s.health]));
    expect(byName.get('missing')).toMatchObject({ status: 'out', cause: 'address_unavailable', reason: `address ${MISSING} is not on this machine (EADDRNOTAVAIL)`, consecutiveFailures: 0 });
    expect(Date.parse(byName.get('missing')!.until as string)).toBeGreaterThan(Date.now());
    expect(byName.get('ip2')).toMatchObject({ status: 'ok', consecutiveFailures: 0 });

    const warned = d.lines.filter((l) => l.level === 40 && l.msg === 'sending source out of its pools');
    expect(warned).toHaveLength(1);
    expect(warned[0]).toMatchObject({ source: 'missing', address: MISSING, reason: `address ${MISSING} is not on this machine (EADDRNOTAVAIL)` });

    const metrics = await (await fetch(`${url()}/metrics`)).text();
    expect(metrics).toMatch(/postrider_source_available\{source="missing"\} 0/);
    expect(metrics).toMatch(/postrider_source_available\{source="ip2"\} 1/);
  });
});
