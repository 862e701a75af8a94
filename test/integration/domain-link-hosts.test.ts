/**
 * Link hosts: the optional `track.<domain>` and `unsub.<domain>` CNAMEs. Once verified, new mail
 * from the domain carries tracking and unsubscribe links on those hosts instead of publicUrl's.
 * Checked against the in-process DNS server and by reading the stored (signed) message body.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { signedBody } from '../support/signing.js';
import { startDaemon, startDaemonWithDns, stopDaemonWithDns, type TestDaemon } from '../support/daemon.js';
import type { TestDns } from '../support/dns-server.js';
import { publish, setupSender, type Sender } from '../support/sending.js';

const PUBLIC = 'https://links.postrider-test.net';
const PUBLIC_HOST = 'links.postrider-test.net';

let dns: TestDns;
let t: TestDaemon;
let s: Sender;

beforeAll(async () => {
  ({ t, dns } = await startDaemonWithDns({ publicUrl: PUBLIC }));
});

afterAll(() => stopDaemonWithDns({ t, dns }));

afterEach(() => {
  for (const r of [s.dnsRecords.tracking, s.dnsRecords.unsubscribe]) if (r) dns.remove(r.host);
});

async function newSender(): Promise<Sender> {
  s = await setupSender(t, dns, { tracking: { opens: true, links: true } });
  return s;
}

async function verify(domainId: string) {
  const res = await t.api('POST', `/domains/${domainId}/verify`);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body;
}

/** Sends a tracked transactional message and returns the URLs in its stored html part. */
async function sendTracked(sender: Sender): Promise<{ click: string; open: string }> {
  const res = await t.api('POST', '/send/transactional', {
    headers: { 'x-service-channel-id': sender.channelId },
    body: { from: { email: `shop@${sender.domain}` }, to: [{ email: 'ann@example.net' }], subject: 'Order', html: '<p><a href="https://shop.example.org/a">Buy</a></p>' },
  });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  const raw = (await signedBody(t.daemon.store, res.body.messageId)).toString().replace(/=\r\n/g, '').replace(/=3D/g, '=');
  return { click: /href="([^"]+)"/.exec(raw)![1], open: /<img src="([^"]+)"/.exec(raw)![1] };
}

async function broadcastUnsubscribe(sender: Sender): Promise<string> {
  const res = await t.api('POST', '/send/broadcast', {
    headers: { 'x-service-channel-id': sender.channelId },
    body: { from: { email: `news@${sender.domain}` }, template: { subject: 'News', text: 'Bye: {{{unsubscribe}}}' }, messages: [{ to: [{ email: 'bob@example.net' }] }] },
  });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  await t.daemon.submission.expander.drain();
  const m = (await t.daemon.store.messages.all()).find((x) => x.broadcastId === res.body.broadcastId)!;
  const raw = (await signedBody(t.daemon.store, m.id)).toString();
  const header = /^List-Unsubscribe:[ \t]*(.*(?:\r\n[ \t].*)*)/im.exec(raw)![1].replace(/\r\n[ \t]+/g, ' ');
  return /<(https:[^>]+)>/.exec(header)![1];
}

describe('link-host records', () => {
  it('lists tracking and unsubscribe CNAMEs to the public host, pending, in the domain answer', async () => {
    const sender = await newSender();
    for (const [kind, label] of [['tracking', 'track'], ['unsubscribe', 'unsub']] as const) {
      expect(sender.dnsRecords[kind]).toEqual({ type: 'cname', host: `${label}.${sender.domain}`, value: PUBLIC_HOST, status: 'pending', lastCheckedAt: null });
    }
  });

  it('keeps publicUrl for links while the records are not published, and the domain verified without them', async () => {
    const sender = await newSender();
    const records = await verify(sender.domainId);
    expect([records.tracking.status, records.unsubscribe.status]).toEqual(['failed', 'failed']);
    expect((await t.api('GET', `/domains/${sender.domainId}`)).body.verified).toBe(true);
    const links = await sendTracked(sender);
    expect(new URL(links.click).origin).toBe(PUBLIC);
    expect(new URL(links.open).origin).toBe(PUBLIC);
  });

  it('moves tracking links of new mail to track.<domain> once its CNAME is verified, and keeps old mail as it was', async () => {
    const sender = await newSender();
    const before = await sendTracked(sender);
    publish(dns, sender.dnsRecords.tracking!);
    const records = await verify(sender.domainId);
    expect(records.tracking).toMatchObject({ status: 'verified', lastCheckedAt: expect.any(String) });
    expect(records.unsubscribe.status).toBe('failed');
    const after = await sendTracked(sender);
    expect(new URL(after.click).origin).toBe(`https://track.${sender.domain}`);
    expect(new URL(after.click).pathname).toBe('/t/click');
    expect(new URL(after.open).origin).toBe(`https://track.${sender.domain}`);
    expect(new URL(before.click).origin).toBe(PUBLIC);
    // The link works wherever it arrives: the CNAME reaches this daemon, which routes by path.
    const u = new URL(after.click);
    const res = await fetch(`${t.url}${u.pathname}${u.search}`, { redirect: 'manual' });
    expect(res.status).toBe(302);
    expect(res.headers.get('location')).toBe('https://shop.example.org/a');
    // Unsubscribe links keep publicUrl until their own record is verified.
    expect(new URL(await broadcastUnsubscribe(sender)).origin).toBe(PUBLIC);
  });

  it('moves unsubscribe links to unsub.<domain> once that CNAME is verified, and back to publicUrl when it fails', async () => {
    const sender = await newSender();
    publish(dns, sender.dnsRecords.unsubscribe!);
    expect((await verify(sender.domainId)).unsubscribe.status).toBe('verified');
    const url = new URL(await broadcastUnsubscribe(sender));
    expect(url.origin).toBe(`https://unsub.${sender.domain}`);
    expect(url.pathname).toBe('/unsubscribe');
    expect(new URL((await sendTracked(sender)).click).origin).toBe(PUBLIC);

    dns.remove(sender.dnsRecords.unsubscribe!.host);
    expect((await verify(sender.domainId)).unsubscribe.status).toBe('failing');
    expect(new URL(await broadcastUnsubscribe(sender)).origin).toBe(PUBLIC);
  });

  it('refuses a CNAME that points somewhere else', async () => {
    const sender = await newSender();
    dns.set(sender.dnsRecords.tracking!.host, 'CNAME', ['elsewhere.example.org']);
    expect((await verify(sender.domainId)).tracking.status).toBe('failed');
    expect(new URL((await sendTracked(sender)).click).origin).toBe(PUBLIC);
  });
});

describe('link-host labels', () => {
  it('takes the host labels from domains.trackingLabel and domains.unsubscribeLabel', async () => {
    const other = await startDaemon({ 'dns.servers': [dns.address], publicUrl: PUBLIC, 'domains.trackingLabel': 'clicks', 'domains.unsubscribeLabel': 'optout' });
    try {
      const d = await other.api('POST', '/domains', { body: { name: 'labels-example.com' } });
      expect(d.status).toBe(200);
      expect(d.body.dnsRecords.tracking.host).toBe('clicks.labels-example.com');
      expect(d.body.dnsRecords.unsubscribe.host).toBe('optout.labels-example.com');
    } finally {
      await other.stop();
    }
  });
});
