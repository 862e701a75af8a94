/**
 * Issue 18: without POSTRIDER_PUBLIC_URL, every link the daemon writes follows the port the HTTP
 * API really listens on (here a random POSTRIDER_HTTP_PORT, not the 8080 default): problem
 * `type` links, the OpenAPI `servers` entry, and the tracking and unsubscribe links inside the
 * mail an MX received from a `postrider serve` child.
 */
import { simpleParser } from 'mailparser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ChildDaemon } from '../support/child-daemon.js';
import { routeTo } from '../support/delivery-rig.js';
import { startDnsServer, type TestDns } from '../support/dns-server.js';
import { startMxServer, type MxServer } from '../support/mx-server.js';
import { setupSender, type Sender } from '../support/sending.js';

const RCPT_DOMAIN = 'inbox.public-url.example.net';
let dns: TestDns;
let mx: MxServer;
let d: ChildDaemon;
let s: Sender;

beforeAll(async () => {
  dns = await startDnsServer();
  mx = await startMxServer({ address: '127.0.23.18' });
  routeTo(dns, RCPT_DOMAIN, '127.0.23.18');
  d = new ChildDaemon({
    env: {
      POSTRIDER_DNS_SERVERS: dns.address,
      POSTRIDER_DELIVERY_ENABLED: 'true',
      POSTRIDER_DELIVERY_PORT: String(mx.port),
      POSTRIDER_DELIVERY_ALLOW_PRIVATE: 'true',
    },
  });
  await d.start();
  s = await setupSender(d, dns, { tracking: { opens: true, links: true } });
}, 60_000);

afterAll(async () => {
  await d?.close();
  await mx?.close();
  await dns?.close();
});

describe('the effective publicUrl of a daemon on POSTRIDER_HTTP_PORT without POSTRIDER_PUBLIC_URL', () => {
  it('names the bound port in problem type links and in the OpenAPI servers entry', async () => {
    expect(d.httpPort).not.toBe(8080);
    const problem = await d.api('GET', '/channels/00000000-0000-4000-8000-000000000000');
    expect(problem.status).toBe(404);
    expect(problem.body.type).toBe(`http://127.0.0.1:${d.httpPort}/errors/${problem.body.code}`);
    const doc = await d.api('GET', '/openapi.json', { key: null });
    expect(doc.status).toBe(200);
    expect(doc.body.servers).toEqual([{ url: `http://127.0.0.1:${d.httpPort}` }]);
  });

  it('writes tracking and unsubscribe links on the bound port into the mail that is sent, and they work', async () => {
    const to = `ann@${RCPT_DOMAIN}`;
    const res = await d.api('POST', '/send/broadcast', {
      headers: { 'x-service-channel-id': s.channelId },
      body: {
        from: { email: `news@${s.domain}` },
        template: { subject: 'News', html: '<p><a href="https://shop.example.org/a">Shop</a> <a href="{{{unsubscribe}}}">Unsubscribe</a></p>', text: 'Unsubscribe: {{{unsubscribe}}}' },
        messages: [{ to: [{ email: to }] }],
      },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const got = await d.whileAlive(() => mx.received.find((m) => m.to.includes(to)), { what: 'the broadcast message at the MX' });
    const base = `http://127.0.0.1:${d.httpPort}`;
    const parsed = await simpleParser(got.raw);
    const html = String(parsed.html);
    const hrefs = [...html.matchAll(/href="([^"]+)"/g)].map((m) => m[1].replace(/&amp;/g, '&'));
    expect(hrefs[0]).toMatch(new RegExp(`^${base}/t/click\\?token=`));
    expect(hrefs[1].startsWith(`${base}/`), hrefs[1]).toBe(true);
    expect(/<img src="([^"]+)"/.exec(html)![1]).toMatch(new RegExp(`^${base}/t/open\\?token=`));
    const listUnsubscribe = /^List-Unsubscribe:[ \t]*(.*(?:\r\n[ \t].*)*)/im.exec(got.raw.toString())![1].replace(/\r\n[ \t]+/g, ' ');
    expect(listUnsubscribe).toContain(`<${base}/`);
    expect(html).not.toContain(':8080');
    // The links reach this daemon: a click redirects to the target.
    const click = await fetch(hrefs[0], { redirect: 'manual' });
    expect(click.status).toBe(302);
    expect(click.headers.get('location')).toBe('https://shop.example.org/a');
  });
});
