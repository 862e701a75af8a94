/**
 * Composition after the commit (src/submission/finishing.ts) survives kill -9: sends answered 200
 * are committed as their normalized requests; the daemon is killed right after the 200, before
 * the finishing stage composed them all; the next start composes, signs and delivers every one,
 * and what the MX receives is, apart from the DKIM-Signature field, byte for byte the message
 * composed from the committed request by another process: composition is deterministic
 * (Message-ID, Date and the multipart boundaries are fixed at intake).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BuildRequest } from '../../src/submission/ports.js';
import type { CommittedRequest } from '../../src/submission/finishing.js';
import { WorkerPool } from '../../src/workers/pool.js';
import { ChildDaemon } from '../support/child-daemon.js';
import { routeTo } from '../support/delivery-rig.js';
import { startDnsServer, type TestDns } from '../support/dns-server.js';
import { startMxServer, type MxServer } from '../support/mx-server.js';
import { openStore } from '../support/store.js';
import { setupSender } from '../support/sending.js';
import { waitFor } from '../support/wait.js';

const RCPT_DOMAIN = 'kill.example.net';
const SENDS = 300;

let dns: TestDns;
let mx: MxServer;
const daemons: ChildDaemon[] = [];

beforeAll(async () => {
  dns = await startDnsServer();
  mx = await startMxServer({ address: '127.0.26.2', starttls: false });
  routeTo(dns, RCPT_DOMAIN, '127.0.26.2');
});

afterAll(async () => {
  for (const d of daemons.reverse()) await d.close();
  await mx?.close();
  await dns?.close();
});

/** The message as composed from its committed request, in this process's own worker pool. */
async function composeHere(dataDir: string, ids: string[]): Promise<Map<string, string>> {
  const store = await openStore(dataDir);
  const pool = new WorkerPool({ threads: 1 });
  await pool.start();
  try {
    const secret = (await store.meta.trackingSecret()).toString('hex');
    const requests: BuildRequest[] = [];
    for (const id of ids) {
      const req = (await store.messages.unfinished(id))!.compose as CommittedRequest;
      requests.push((req.engagement ? { ...req, engagement: { ...req.engagement, secret } } : req) as BuildRequest);
    }
    const settled = await pool.finishMany(requests.map((build) => ({ build })));
    return new Map(settled.map((s, i) => [ids[i]!, s.status === 'fulfilled' ? Buffer.from(s.value.raw).toString('latin1') : `failed: ${String(s.reason)}`]));
  } finally {
    await pool.stop();
    await store.stop();
  }
}

/** The received message without the DKIM-Signature field the signing prepended (RFC 6376 3.5: folded lines start with whitespace). */
const unsigned = (raw: string) => raw.replace(/^DKIM-Signature:.*\r\n(?:[ \t].*\r\n)*/i, '');

describe('kill -9 after the 200', () => {
  it('composes, signs and delivers at the next start every message left uncomposed, byte-identical to its composition elsewhere', async () => {
    const first = new ChildDaemon({ env: { POSTRIDER_DNS_SERVERS: dns.address } });
    daemons.push(first);
    await first.start();
    const s = await setupSender(first, dns);
    const requests = Array.from({ length: SENDS }, (_, i) => ({
      from: { email: `app@${s.domain}` },
      to: [{ email: `r${i}@${RCPT_DOMAIN}` }],
      template: { subject: 'Order {{n}}', html: '<p>Hello {{name}}, order {{n}}</p>', text: 'Hello {{name}}, order {{n}}', data: { n: i, name: 'Ann' } },
    }));
    const res = await first.api('POST', '/send/transactional/batch', { headers: { 'x-service-channel-id': s.channelId }, body: { requests } });
    await first.kill9();
    expect(res.status, JSON.stringify(res.body).slice(0, 500)).toBe(200);
    const ids = (res.body.responses as Array<{ messageId: string }>).map((r) => r.messageId);
    expect(ids.every(Boolean)).toBe(true);

    const probe = await openStore(first.dataDir);
    const left: string[] = [];
    for (const id of ids) if (await probe.messages.isUnfinished(id)) left.push(id);
    await probe.stop();
    // The kill came before the finishing stage got through the batch (it runs after the 200).
    expect(left.length).toBeGreaterThan(0);
    const expected = await composeHere(first.dataDir, left.slice(0, 20));

    const second = new ChildDaemon({
      dataDir: first.dataDir,
      env: {
        POSTRIDER_DNS_SERVERS: dns.address,
        POSTRIDER_DELIVERY_ENABLED: 'true',
        POSTRIDER_DELIVERY_ALLOW_PRIVATE: 'true',
        POSTRIDER_DELIVERY_PORT: String(mx.port),
        POSTRIDER_DELIVERY_RATE: '1000',
      },
    });
    daemons.push(second);
    await second.start();
    const byId = (id: string) => mx.received.find((m) => m.raw.toString('latin1').includes(`<${id}@${s.domain}>`));
    await waitFor(() => ids.every(byId), { what: `the delivery of all ${SENDS} messages`, timeout: 60_000 });
    for (const [id, composed] of expected) {
      const raw = byId(id)!.raw.toString('latin1');
      expect(raw).toMatch(/^DKIM-Signature: /);
      expect(unsigned(raw)).toBe(composed);
    }
  }, 120_000);
});
