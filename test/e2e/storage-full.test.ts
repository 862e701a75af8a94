/**
 * A full disk, simulated for real: the daemon runs under a soft file size limit (prlimit), so
 * LMDB's data file cannot grow past it and commits fail the way they fail on a full disk (a
 * short write, EIO / EFBIG). Sends must then fail clearly (HTTP 507 storage_full problem, SMTP
 * 452 4.3.1), the daemon must keep running, nothing acknowledged may be lost, and once the
 * limit is lifted (space returns) sending works again without a restart.
 */
import nodemailer from 'nodemailer';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ChildDaemon, prlimitAvailable } from '../support/child-daemon.js';
import type { ApiResponse } from '../support/daemon.js';
import { startDnsServer, type TestDns } from '../support/dns-server.js';
import { startMxServer, type MxServer } from '../support/mx-server.js';
import { setupSender, type Sender } from '../support/sending.js';
import { waitFor } from '../support/wait.js';

const RCPT_DOMAIN = 'full.example.net';
const LIMIT = 6 * 1024 * 1024;
/** Each message carries this much text, so a few dozen fill the limit. */
const FILLER = 'All work and no play makes Jack a dull boy. '.repeat(6000);

let dns: TestDns;
let mx: MxServer;
let d: ChildDaemon;
let s: Sender;
const accepted: string[] = [];

beforeAll(async () => {
  if (!(await prlimitAvailable())) throw new Error('prlimit (util-linux) is needed to simulate a full disk');
  dns = await startDnsServer();
  mx = await startMxServer({ address: '127.0.31.1', starttls: false });
  dns.set(RCPT_DOMAIN, 'MX', [{ priority: 10, exchange: 'mx.full.example.net' }]);
  dns.set('mx.full.example.net', 'A', ['127.0.31.1']);
  d = new ChildDaemon({
    fsizeLimitBytes: LIMIT,
    env: {
      POSTRIDER_DNS_SERVERS: dns.address,
      POSTRIDER_DELIVERY_ENABLED: 'true',
      POSTRIDER_DELIVERY_ALLOW_PRIVATE: 'true',
      POSTRIDER_DELIVERY_PORT: String(mx.port),
      POSTRIDER_DELIVERY_RETRY_SCHEDULE: '1s*',
    },
  });
  await d.start();
  s = await setupSender(d, dns);
}, 60_000);

afterAll(async () => {
  await d?.close();
  await mx?.close();
  await dns?.close();
});

function send(text = FILLER): Promise<ApiResponse> {
  return d.api('POST', '/send/transactional', {
    headers: { 'x-service-channel-id': s.channelId },
    body: { from: { email: `app@${s.domain}` }, to: [{ email: `user@${RCPT_DOMAIN}` }], subject: 'filler', text },
  });
}

function smtpSend(text = FILLER) {
  const tr = nodemailer.createTransport({ host: '127.0.0.1', port: d.smtpPort, secure: false, ignoreTLS: true, auth: { user: s.channelId, pass: d.apiKey } });
  return tr.sendMail({ from: `app@${s.domain}`, to: `smtp@${RCPT_DOMAIN}`, subject: 'filler over smtp', text });
}

describe('a full disk', () => {
  let full: ApiResponse;

  it('answers a send that does not fit with a 507 storage_full problem, and keeps everything acknowledged', async () => {
    for (let i = 0; i < 200; i++) {
      const res = await send();
      if (res.status !== 200) {
        full = res;
        break;
      }
      accepted.push(res.body.messageId);
    }
    expect(full, 'the file size limit was never reached').toBeDefined();
    expect(accepted.length).toBeGreaterThan(3);
    expect(full.status, JSON.stringify(full.body)).toBe(507);
    expect(full.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(full.body).toMatchObject({ code: 'storage_full', status: 507, type: expect.stringMatching(/\/errors\/storage_full$/) });
    expect(full.body.requestId).toBe(full.headers.get('x-request-id'));
    // Still full. A commit may still fit in pages LMDB freed meanwhile, so each answer is a 200
    // (counted as acknowledged) or the same problem; and the daemon is still there.
    for (let i = 0; i < 5; i++) {
      const res = await send();
      if (res.status === 200) accepted.push(res.body.messageId);
      else expect(res.body, JSON.stringify(res.body)).toMatchObject({ status: 507, code: 'storage_full' });
    }
    expect(d.alive).toBe(true);
  });

  it('refuses SMTP DATA with 452 4.3.1 while full', async () => {
    // As above, a message may still fit in pages LMDB freed meanwhile (signed bodies replace
    // unsigned ones): it is acknowledged and counted, and the next one is refused.
    for (let i = 0; i < 10; i++) {
      const sent = await smtpSend().then(
        (info) => ({ info, err: undefined }),
        (err) => ({ info: undefined, err }),
      );
      if (sent.info) {
        accepted.push(/queued as ([0-9a-f-]{36})/.exec(sent.info.response)![1]);
        continue;
      }
      expect(sent.err.responseCode, String(sent.err)).toBe(452);
      expect(sent.err.response).toMatch(/^452 4\.3\.1 /);
      return;
    }
    throw new Error('ten SMTP messages were accepted on a full disk');
  });

  it('keeps serving reads and health checks while full', async () => {
    expect((await d.api('GET', '/channels')).status).toBe(200);
    expect((await d.api('GET', `/activity/messages/${accepted[0]}`)).status).toBe(200);
    expect((await fetch(`${d.url}/health`)).status).toBe(200);
    expect(d.alive).toBe(true);
  });

  it('accepts mail again, without a restart, once space returns', async () => {
    await d.setFsizeLimit(null);
    const res = await send();
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    accepted.push(res.body.messageId);
    const info = await smtpSend();
    expect(info.response).toMatch(/^250 /);
    accepted.push(/queued as ([0-9a-f-]{36})/.exec(info.response)![1]);
  });

  it('delivers every acknowledged message and stored nothing for the refused ones', async () => {
    // The envelope sender is the recipient's return path: bounces+<message id>-<mac>@<return-path host>.
    const delivered = () => new Set(mx.received.map((m) => /^bounces\+([0-9a-f-]{36})-[0-9a-f]{16}@/.exec(m.from)?.[1]));
    const missing = () => accepted.filter((id) => !delivered().has(id));
    await waitFor(() => missing().length === 0, { what: 'every acknowledged message at the MX', timeout: 20_000 }).catch(async (err: Error) => {
      const details = await d.api('GET', `/activity/messages/${missing()[0]}`);
      throw new Error(`${err.message}\n${missing().length} of ${accepted.length} not delivered: ${missing().join(', ')}\n${JSON.stringify(details.body).slice(0, 3000)}\ndaemon log: ${d.stdout.slice(-3000)}`);
    });
    const events = await d.api('GET', '/activity/events?eventTypes=accepted&limit=500');
    expect(events.status).toBe(200);
    expect(events.body.totalCount).toBe(accepted.length);
  }, 40_000);

  it('records every delivery outcome once space returns, without waiting for the lease to expire', async () => {
    // Attempts that finished while the disk was full could not write their outcome; they write it
    // again until it fits (the lease would keep them for 30 minutes and send them twice).
    const recorded = async () => {
      const res = await d.api('GET', '/activity/events?eventTypes=delivered&limit=500');
      return new Set<string>(res.body.results.map((e: { messageId: string }) => e.messageId));
    };
    const unrecorded = async () => {
      const done = await recorded();
      return accepted.filter((id) => !done.has(id));
    };
    await waitFor(async () => (await unrecorded()).length === 0, { what: 'every delivery outcome recorded', timeout: 20_000 }).catch(async (err: Error) => {
      throw new Error(`${err.message}\noutcomes not recorded: ${(await unrecorded()).join(', ')}\n${d.stdout.slice(-3000)}`);
    });
    // Each message reached the MX once: no attempt was repeated for want of its record.
    const perMessage = new Map<string, number>();
    for (const m of mx.received) {
      const id = /^bounces\+([0-9a-f-]{36})@/.exec(m.from)?.[1];
      if (id) perMessage.set(id, (perMessage.get(id) ?? 0) + 1);
    }
    expect([...perMessage.values()].every((n) => n === 1)).toBe(true);
  }, 40_000);

  it('still has every acknowledged message after a restart', async () => {
    expect((await d.stop()).code, d.stdout.slice(-3000)).toBe(0);
    d.fsizeLimitBytes = undefined;
    await d.start();
    for (const id of accepted) expect((await d.api('GET', `/activity/messages/${id}`)).status, id).toBe(200);
    expect(d.stdout + d.stderr).not.toMatch(/Unhandled|uncaught/i);
  });
});
