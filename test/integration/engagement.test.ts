/**
 * Open and click tracking, one-click unsubscribe and resubscribe through the public links, with
 * their events, statistics and suppressions; List-Unsubscribe covered by a DKIM signature that an
 * independent verifier passes.
 */
import { simpleParser } from 'mailparser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { MessageRecord } from '../../src/domain/types.js';
import { startDaemonWithDns, stopDaemonWithDns, type TestDaemon } from '../support/daemon.js';
import type { TestDns } from '../support/dns-server.js';
import { setupSender, type Sender } from '../support/sending.js';
import { signedBody, verifyDkim } from '../support/signing.js';
// No port verb removes a single message: retention's work on one message, done at once by the engine fixture.
import { forgetMessage } from '../support/engine-fixtures.js';

const PUBLIC = 'https://links.postrider-test.net';
let dns: TestDns;
let t: TestDaemon;
let tracked: Sender;

/** A public link of a sent message, fetched against the test daemon (path and query only). */
const local = (publicLink: string) => {
  const u = new URL(publicLink);
  expect(u.origin).toBe(PUBLIC);
  return `${t.url}${u.pathname}${u.search}`;
};

const hrefs = (html: string) => [...html.matchAll(/href="([^"]+)"/g)].map((m) => m[1].replace(/&amp;/g, '&'));
const pixelOf = (html: string) => /<img src="([^"]+)"/.exec(html)![1];
const flipFirstBit = (mac: string) => {
  const bytes = Buffer.from(mac, 'base64url');
  bytes[0] ^= 1;
  return bytes.toString('base64url');
};

/** A header field of a stored message, unfolded (mailparser restructures the List-* fields). */
const headerOf = (raw: Buffer, name: string) =>
  new RegExp(`^${name}:[ \\t]*(.*(?:\\r\\n[ \\t].*)*)`, 'im').exec(raw.toString())?.[1].replace(/\r\n[ \t]+/g, ' ');
const unsubUrl = async (m: MessageRecord) => /<(https:[^>]+)>/.exec(headerOf((await t.daemon.store.messages.body(m.id))!, 'List-Unsubscribe')!)![1];
const suppression = (channelId: string, mailType: 'broadcast' | 'transactional', email: string) => t.daemon.store.suppressions.get(channelId, mailType, email);

const totals = async (channelId: string) => (await t.api('GET', `/statistics/totals?channelId=${channelId}`)).body;
const events = async (messageId: string, types: string) =>
  (await t.api('GET', `/activity/events?messageId=${messageId}&eventTypes=${types}`)).body.results as any[];

async function messagesOf(broadcastId: string): Promise<MessageRecord[]> {
  return (await t.daemon.store.messages.all()).filter((m) => m.broadcastId === broadcastId);
}

async function sendBroadcast(s: Sender, to: string, html = '<p>News</p><p><a href="{{{unsubscribe}}}">Unsubscribe</a></p>'): Promise<MessageRecord> {
  const res = await t.api('POST', '/send/broadcast', {
    headers: { 'x-service-channel-id': s.channelId },
    body: { from: { email: `news@${s.domain}` }, template: { subject: 'News', html, text: 'Unsubscribe: {{{unsubscribe}}}' }, messages: [{ to: [{ email: to }] }] },
  });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  await t.daemon.submission.expander.drain();
  // Composed after the commit (src/submission/finishing.ts): the body is read once it is there.
  await signedBody(t.daemon.store, (await messagesOf(res.body.broadcastId))[0].id);
  return (await messagesOf(res.body.broadcastId))[0];
}

beforeAll(async () => {
  ({ t, dns } = await startDaemonWithDns({ publicUrl: PUBLIC }));
  tracked = await setupSender(t, dns, { tracking: { opens: true, links: true } });
});

afterAll(() => stopDaemonWithDns({ t, dns }));

/** Where the page's button posts, as a browser resolves its form action against the page's URL. */
function formTarget(page: string, pageUrl: string): string {
  const action = /<form method="post" action="([^"]*)"/.exec(page)?.[1];
  expect(action, 'the form of the page').toBeDefined();
  return new URL(action!, pageUrl).href;
}

describe('open and click tracking', () => {
  let message: MessageRecord;

  beforeAll(async () => {
    const res = await t.api('POST', '/send/transactional', {
      headers: { 'x-service-channel-id': tracked.channelId },
      body: {
        from: { email: `shop@${tracked.domain}` },
        to: [{ email: 'Ann@Example.net' }],
        subject: 'Order',
        html: '<html><body><p><a href="https://shop.example.org/a?x=1&amp;y=2">Buy</a> <a href="mailto:help@example.org">help</a></p></body></html>',
        text: 'https://shop.example.org/a',
      },
    });
    expect(res.status).toBe(200);
    // Composed (links rewritten, pixel added) after the commit: src/submission/finishing.ts.
    await signedBody(t.daemon.store, res.body.messageId);
    message = (await t.daemon.store.messages.get(res.body.messageId))!;
  });

  it('rewrites web links through the redirect endpoint and appends a pixel, both signed, before DKIM signing', async () => {
    const parsed = await simpleParser((await t.daemon.store.messages.body(message.id))!);
    const html = String(parsed.html);
    const links = hrefs(html);
    expect(links[0]).toMatch(new RegExp(`^${PUBLIC}/t/click\\?token=[A-Za-z0-9_-]+\\.[A-Za-z0-9_-]+$`));
    expect(links[1]).toBe('mailto:help@example.org');
    expect(pixelOf(html)).toMatch(new RegExp(`^${PUBLIC}/t/open\\?token=`));
    expect(html.indexOf('<img')).toBeLessThan(html.indexOf('</body>'));
    expect(parsed.text).toContain('https://shop.example.org/a');
  });

  it('records an opened event with ip and user agent when the pixel is fetched', async () => {
    const html = String((await simpleParser((await t.daemon.store.messages.body(message.id))!)).html);
    const res = await fetch(local(pixelOf(html)), { headers: { 'user-agent': 'TestMail/1.0' } });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('image/gif');
    expect(res.headers.get('cache-control')).toContain('no-store');
    expect((await res.arrayBuffer()).byteLength).toBeGreaterThan(30);
    const opened = await events(message.id, 'opened');
    expect(opened).toHaveLength(1);
    expect(opened[0]).toMatchObject({ eventType: 'opened', recipients: ['ann@example.net'], mailType: 'transactional', details: { ip: '127.0.0.1', userAgent: 'TestMail/1.0' } });
  });

  it('redirects a click to the signed target and records a clicked event with the link', async () => {
    const html = String((await simpleParser((await t.daemon.store.messages.body(message.id))!)).html);
    const res = await fetch(local(hrefs(html)[0]), { redirect: 'manual' });
    expect(res.status).toBe(302);
    expect(res.headers.get('location')).toBe('https://shop.example.org/a?x=1&y=2');
    const clicked = await events(message.id, 'clicked');
    expect(clicked).toHaveLength(1);
    expect(clicked[0].details).toMatchObject({ link: 'https://shop.example.org/a?x=1&y=2', ip: '127.0.0.1' });
    const stats = await totals(tracked.channelId);
    expect(stats.transactional).toMatchObject({ sent: 1, opened: 1, clicked: 1 });
  });

  it('answers 404 to forged, altered or misused tokens and never redirects', async () => {
    const html = String((await simpleParser((await t.daemon.store.messages.body(message.id))!)).html);
    const click = new URL(hrefs(html)[0]);
    const [payload, mac] = click.searchParams.get('token')!.split('.');
    const evil = Buffer.from(Buffer.from(payload, 'base64url').toString().replace('https://shop.example.org/a?x=1&y=2', 'https://evil.example.com/')).toString('base64url');
    const open = new URL(pixelOf(html)).searchParams.get('token')!;
    const attempts = [
      `/t/click?token=${evil}.${mac}`,
      // One MAC bit flipped: a fixed "AA" suffix equalled the real MAC once in 4,096 runs (CI did).
      `/t/click?token=${payload}.${flipFirstBit(mac)}`,
      `/t/click?token=${open}`,
      '/t/click?token=garbage',
      '/t/click',
      '/t/click?token=https://evil.example.com/',
      `/t/open?token=${payload}.${mac}`,
      `/unsubscribe?token=${open}`,
    ];
    for (const path of attempts) {
      const res = await fetch(t.url + path, { redirect: 'manual' });
      expect(res.status, path).toBe(404);
      expect(res.headers.get('location'), path).toBeNull();
    }
    expect((await events(message.id, 'opened,clicked')).length).toBe(2);
  });

  it('documents the public engagement routes in the OpenAPI document without security', async () => {
    const doc = (await t.api('GET', '/openapi.json', { key: null })).body;
    for (const p of ['/t/open', '/t/click', '/unsubscribe', '/unsubscribe/resubscribe']) expect(Object.keys(doc.paths)).toContain(p);
    expect(doc.paths['/unsubscribe'].post.security).toEqual([]);
  });

  it('leaves messages of channels without tracking untouched', async () => {
    const plain = await setupSender(t, dns);
    const res = await t.api('POST', '/send/transactional', {
      headers: { 'x-service-channel-id': plain.channelId },
      body: { from: { email: `shop@${plain.domain}` }, to: [{ email: 'bob@example.net' }], subject: 'x', html: '<a href="https://example.org/">x</a>' },
    });
    expect((await t.daemon.store.messages.get(res.body.messageId))!.html).toBe('<a href="https://example.org/">x</a>');
  });

  it('answers HEAD on the pixel and the redirect as GET does, but records nothing (link checkers and scanners send HEAD)', async () => {
    const own = await setupSender(t, dns, { tracking: { opens: true, links: true } });
    const res = await t.api('POST', '/send/transactional', {
      headers: { 'x-service-channel-id': own.channelId },
      body: { from: { email: `shop@${own.domain}` }, to: [{ email: 'dan@example.net' }], subject: 'Head', html: '<p><a href="https://shop.example.org/h">h</a></p>' },
    });
    const html = String((await simpleParser(await signedBody(t.daemon.store, res.body.messageId))).html);
    const head = await fetch(local(hrefs(html)[0]), { method: 'HEAD', redirect: 'manual' });
    expect(head.status).toBe(302);
    expect(head.headers.get('location')).toBe('https://shop.example.org/h');
    const pixel = await fetch(local(pixelOf(html)), { method: 'HEAD' });
    expect(pixel.status).toBe(200);
    expect(pixel.headers.get('content-type')).toBe('image/gif');
    // Each answer came after its event would have been committed (the routes await the record).
    expect(await events(res.body.messageId, 'opened,clicked')).toEqual([]);
    expect((await totals(own.channelId)).transactional).toMatchObject({ opened: 0, clicked: 0 });
    // A GET still records.
    expect((await fetch(local(hrefs(html)[0]), { redirect: 'manual' })).status).toBe(302);
    expect((await events(res.body.messageId, 'opened,clicked')).map((e) => e.eventType)).toEqual(['clicked']);
  });
});

describe('unsubscribe', () => {
  let s: Sender;

  beforeAll(async () => {
    s = await setupSender(t, dns);
  });

  it('gives broadcast mail List-Unsubscribe and one-click List-Unsubscribe-Post, signed by DKIM and verified independently', async () => {
    const m = await sendBroadcast(s, 'carol@example.net');
    const raw = await signedBody(t.daemon.store, m.id);
    const parsed = await simpleParser(raw);
    expect(headerOf(raw, 'List-Unsubscribe-Post')).toBe('List-Unsubscribe=One-Click');
    const listUnsub = await unsubUrl(m);
    expect(listUnsub).toMatch(new RegExp(`^${PUBLIC}/unsubscribe\\?token=`));
    // The {{{unsubscribe}}} placeholder gives the same URL in the html and text parts.
    expect(hrefs(String(parsed.html))).toContain(listUnsub);
    expect(parsed.text).toContain(listUnsub);
    const result = await verifyDkim(dns, raw);
    expect(result.results.map((r: any) => r.status.result)).toEqual(['pass']);
    const signed = String((result.results[0] as unknown as { signingHeaders: { keys: string } }).signingHeaders.keys).toLowerCase().split(': ');
    expect(signed).toEqual(expect.arrayContaining(['list-unsubscribe', 'list-unsubscribe-post']));
  });

  it('shows a confirmation page on GET without unsubscribing (mail software fetches links on its own)', async () => {
    const m = await sendBroadcast(s, 'dave@example.net');
    const url = await unsubUrl(m);
    const res = await fetch(local(url));
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/html');
    const page = await res.text();
    expect(formTarget(page, url)).toBe(url);
    // Behind a proxy that serves the daemon under a path of publicUrl, the button stays under it.
    const proxied = `https://mail.example.org/postrider/unsubscribe${new URL(url).search}`;
    expect(formTarget(page, proxied)).toBe(proxied);
    // The same page at /unsubscribe/ (trailing slashes are ignored) posts to the same place.
    const slashed = await (await fetch(`${t.url}/unsubscribe/${new URL(url).search}`)).text();
    expect(formTarget(slashed, `https://mail.example.org/postrider/unsubscribe/${new URL(url).search}`)).toBe(proxied);
    expect(await suppression(s.channelId, 'broadcast', 'dave@example.net')).toBeUndefined();
    expect((await t.daemon.store.events.ofMessage(m.id)).map((e) => e.eventType)).not.toContain('unsubscribed');
  });

  it('unsubscribes on the one-click POST: suppression for broadcast mail, an unsubscribed event and its counter', async () => {
    const m = await sendBroadcast(s, 'erin@example.net');
    const url = await unsubUrl(m);
    const post = () =>
      fetch(local(url), { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'List-Unsubscribe=One-Click' });
    const res = await post();
    expect(res.status).toBe(200);
    const page = await res.text();
    const resubscribe = `${PUBLIC}/unsubscribe/resubscribe${new URL(url).search}`;
    expect(formTarget(page, url)).toBe(resubscribe);
    expect(formTarget(page, `https://mail.example.org/postrider/unsubscribe${new URL(url).search}`)).toBe(
      `https://mail.example.org/postrider/unsubscribe/resubscribe${new URL(url).search}`,
    );
    expect((await post()).status).toBe(200); // providers may retry: nothing more happens
    expect(await suppression(s.channelId, 'broadcast', 'erin@example.net')).toMatchObject({ reason: 'unsubscribe' });
    expect(await suppression(s.channelId, 'transactional', 'erin@example.net')).toBeUndefined();
    const unsub = await events(m.id, 'unsubscribed');
    expect(unsub).toHaveLength(1);
    expect(unsub[0]).toMatchObject({ recipients: ['erin@example.net'], mailType: 'broadcast', details: { ip: '127.0.0.1' } });
    expect((await totals(s.channelId)).broadcast).toMatchObject({ unsubscribed: 1 });
    // The next broadcast skips the address.
    const again = await t.api('POST', '/send/broadcast', {
      headers: { 'x-service-channel-id': s.channelId },
      body: { from: { email: `news@${s.domain}` }, template: { subject: 'x', text: 'y' }, messages: [{ to: [{ email: 'erin@example.net' }] }] },
    });
    await t.daemon.submission.expander.drain();
    expect(await messagesOf(again.body.broadcastId)).toEqual([]);
  });

  it('resubscribes: lifts the unsubscribe and records resubscribed, but never lifts a bounce suppression', async () => {
    const m = await sendBroadcast(s, 'finn@example.net');
    const url = await unsubUrl(m);
    const token = new URL(url).searchParams.get('token')!;
    expect((await fetch(local(url), { method: 'POST' })).status).toBe(200);
    const res = await fetch(`${t.url}/unsubscribe/resubscribe?token=${token}`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: '' });
    expect(res.status).toBe(200);
    const page = await res.text();
    expect(page).toContain('subscribed again');
    expect(formTarget(page, `https://mail.example.org/postrider/unsubscribe/resubscribe?token=${token}`)).toBe(
      `https://mail.example.org/postrider/unsubscribe?token=${token}`,
    );
    expect(await suppression(s.channelId, 'broadcast', 'finn@example.net')).toBeUndefined();
    expect((await events(m.id, 'resubscribed')).map((e) => e.recipients)).toEqual([['finn@example.net']]);

    await t.api('POST', '/suppressions', { body: { channelId: s.channelId, mailType: 'broadcast', emails: ['finn@example.net'] } });
    await fetch(`${t.url}/unsubscribe/resubscribe?token=${token}`, { method: 'POST' });
    expect(await suppression(s.channelId, 'broadcast', 'finn@example.net')).toMatchObject({ reason: 'manual' });
    expect(await events(m.id, 'resubscribed')).toHaveLength(1);
  });

  it('keeps unsubscribe links working after retention removed the message', async () => {
    const m = await sendBroadcast(s, 'gus@example.net');
    const url = await unsubUrl(m);
    await forgetMessage(t.daemon.store, m.id);
    expect((await fetch(local(url), { method: 'POST' })).status).toBe(200);
    expect(await suppression(s.channelId, 'broadcast', 'gus@example.net')).toMatchObject({ reason: 'unsubscribe' });
  });
});
