/**
 * /inbound/messages through a real daemon (issue 33): mail arrives over SMTP on loopback for
 * inbound routes, is POSTed to a webhook receiver on loopback, and is then read through the
 * daemon's HTTP port: the list with its filters and cursor paging, one message with its
 * attempts and verdicts, the message as received, the link of an attachment too large to
 * inline (the payload's url, fetched with the API key), the retry of a failed message, the
 * messages received per day (GET /inbound/statistics/daily), and
 * every error those answer (401, 403, 404, 409, 422).
 */
import nodemailer from 'nodemailer';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDaemonWithDns, stopDaemonWithDns, type TestDaemon } from '../support/daemon.js';
import type { TestDns } from '../support/dns-server.js';
import { channelKey, newAccount, newChannel, newVerifiedDomain, uniqueName } from '../support/domains.js';
import { waitFor } from '../support/wait.js';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver.js';

let t: TestDaemon;
let dns: TestDns;
let receiver: WebhookReceiver;
let channelId: string;
let domain: string;

/** Larger than attachmentInlineMax: listed with a url in the payload. */
const BIG = Buffer.from('%PDF-1.4 ' + 'x'.repeat(400));
const SMALL = Buffer.from('Inhalt der Notiz');

beforeAll(async () => {
  receiver = await startWebhookReceiver();
  ({ t, dns } = await startDaemonWithDns({
    'inbound.enabled': true,
    'inbound.port': 0,
    'inbound.attachmentInlineMax': 100,
    'webhooks.allowHttp': true,
    'webhooks.allowPrivate': true,
    'webhooks.retryBaseMs': 50,
    'inbound.postMaxAgeMs': 1500,
  }));
  dns.set('example.org', 'TXT', ['v=spf1 ip4:127.0.0.1 -all']);
  channelId = await newChannel(t);
  domain = (await newVerifiedDomain(t, dns, { name: uniqueName('in'), channelIds: [channelId] })).name;
}, 60_000);

afterAll(async () => {
  await stopDaemonWithDns({ t, dns });
  await receiver?.close();
});

async function route(local: string, path: string, o: { channel?: string } = {}): Promise<{ id: string }> {
  const res = await t.api('POST', '/inbound/routes', { body: { channelId: o.channel ?? channelId, address: `${local}@${domain}`, url: receiver.url(path) } });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body;
}

async function send(to: string, subject: string, from = 'ann@example.org'): Promise<void> {
  const transport = nodemailer.createTransport({ host: '127.0.0.1', port: t.daemon.inbound!.port, secure: false, ignoreTLS: true });
  try {
    await transport.sendMail({
      envelope: { from, to: [to] },
      from: `Ann <${from}>`,
      to,
      subject,
      text: 'Hallo!',
      attachments: [
        { filename: 'notiz.txt', content: SMALL, contentType: 'text/plain' },
        { filename: 'rechnung ä.pdf', content: BIG, contentType: 'application/pdf' },
      ],
    });
  } finally {
    transport.close();
  }
}

/** The route's messages as the API lists them, once `n` are there with `status`. */
function listed(routeId: string, status: string, n = 1): Promise<any[]> {
  return waitFor(
    async () => {
      const res = await t.api('GET', `/inbound/messages?routeId=${routeId}&status=${status}`);
      return res.body.results.length >= n ? res.body.results : undefined;
    },
    { what: `${n} ${status} message(s) of route ${routeId}`, timeout: 20_000 },
  );
}

describe('GET /inbound/messages', () => {
  let posted: { route: string; id: string };

  beforeAll(async () => {
    const r = await route('list', '/list');
    await send(`list@${domain}`, 'Erste Frage', 'ann@example.org');
    await send(`list@${domain}`, 'Zweite Frage', 'bob@example.org');
    await send(`list@${domain}`, 'Dritte Frage', 'ann@example.org');
    const all = await listed(r.id, 'posted', 3);
    posted = { route: r.id, id: all[0].id };
  }, 60_000);

  it('lists newest first with the envelope, From, Subject, status and attempt count', async () => {
    const res = await t.api('GET', `/inbound/messages?routeId=${posted.route}`);
    expect(res.status).toBe(200);
    expect(res.body.after).toBeNull();
    expect(res.body.results.map((m: { subject: string }) => m.subject)).toEqual(['Dritte Frage', 'Zweite Frage', 'Erste Frage']);
    expect(res.body.results[0]).toMatchObject({
      routeId: posted.route,
      channelId,
      status: 'posted',
      from: 'ann@example.org',
      envelope: { mailFrom: 'ann@example.org', rcptTo: [`list@${domain}`] },
      mailboxHash: null,
      attemptCount: 1,
      nextAttemptAt: null,
    });
  });

  it('filters by from, subject part, status, channel and date range', async () => {
    const q = async (query: string) => (await t.api('GET', `/inbound/messages?routeId=${posted.route}&${query}`)).body.results.map((m: { subject: string }) => m.subject);
    expect(await q('from=BOB@')).toEqual(['Zweite Frage']);
    expect(await q('subject=erste')).toEqual(['Erste Frage']);
    expect(await q('status=failed')).toEqual([]);
    expect(await q(`channelId=${channelId}`)).toHaveLength(3);
    const first = (await t.api('GET', `/inbound/messages/${posted.id}`)).body.receivedAt;
    expect(await q(`startDate=${encodeURIComponent(new Date(Date.now() + 60_000).toISOString())}`)).toEqual([]);
    expect(await q(`endDate=${encodeURIComponent(new Date(Date.parse(first) + 1).toISOString())}`)).toHaveLength(3);
  });

  it('pages with limit and the cursor `after` until it is null', async () => {
    const seen: string[] = [];
    let after: string | null = '';
    while (after !== null) {
      const res = await t.api('GET', `/inbound/messages?routeId=${posted.route}&limit=1${after ? `&after=${after}` : ''}`);
      expect(res.status).toBe(200);
      seen.push(...res.body.results.map((m: { subject: string }) => m.subject));
      after = res.body.after;
      expect(seen.length).toBeLessThan(5);
    }
    expect(seen).toEqual(['Dritte Frage', 'Zweite Frage', 'Erste Frage']);
  });

  it('answers 422 naming every bad parameter, and 404/403 for a channel outside the key', async () => {
    const bad = await t.api('GET', '/inbound/messages?routeId=nope&status=lost&after=xyz&limit=0&startDate=2026-02-01T00:00:00Z&endDate=2026-01-01T00:00:00Z');
    expect(bad.status).toBe(422);
    expect(Object.keys(bad.body.errors).sort()).toEqual(['/after', '/endDate', '/limit', '/routeId', '/status']);
    expect((await t.api('GET', '/inbound/messages?channelId=00000000-0000-4000-8000-000000000000')).body.code).toBe('channel_not_found');
    const other = await newChannel(t, undefined, 'other');
    const key = await channelKey(t, t.accountId, other);
    expect((await t.api('GET', `/inbound/messages?channelId=${channelId}`, { key })).status).toBe(403);
    expect((await t.api('GET', `/inbound/messages?routeId=${posted.route}`, { key })).body.results).toEqual([]);
    expect((await t.api('GET', '/inbound/messages', { key: null })).status).toBe(401);
  });
});

describe('GET /inbound/messages/{id}, /raw and /attachments/{index}', () => {
  let id: string;
  let payload: any;

  beforeAll(async () => {
    const r = await route('one', '/one');
    await send(`one@${domain}`, 'Mit Anhang');
    [{ id }] = await listed(r.id, 'posted');
    payload = receiver.at('/one')[0].json;
  }, 60_000);

  it('answers the message with its status, POST attempts and their answers, and the auth verdicts', async () => {
    const res = await t.api('GET', `/inbound/messages/${id.toUpperCase()}`);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      id,
      status: 'posted',
      clientAddress: '127.0.0.1',
      processedAt: expect.any(String),
      attempts: [{ at: expect.any(String), statusCode: 200, error: null }],
      auth: { spf: { result: 'pass', domain: 'example.org' }, dkim: [], dmarc: { result: expect.any(String) }, arc: { result: 'none' } },
    });
  });

  it('answers the message as received as message/rfc822', async () => {
    const res = await t.api('GET', `/inbound/messages/${id}/raw`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^message\/rfc822/);
    expect(res.body).toMatch(/^Subject: Mit Anhang\r$/m);
  });

  it("serves an attachment too large to inline at the payload's url, with the API key, and the inlined one at its index", async () => {
    expect(payload.attachments).toMatchObject([{ filename: 'notiz.txt', content: SMALL.toString('base64') }, { filename: 'rechnung ä.pdf', size: BIG.length }]);
    // publicUrl is not configured here: the daemon's own address, so the link is fetched as the payload gives it.
    const url: string = payload.attachments[1].url;
    expect(url).toBe(`${t.url}/inbound/messages/${id}/attachments/1`);
    const res = await fetch(url, { headers: { authorization: `Bearer ${t.apiKey}` } });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/pdf');
    expect(res.headers.get('content-disposition')).toBe(`attachment; filename="rechnung _.pdf"; filename*=UTF-8''${encodeURIComponent('rechnung ä.pdf')}`);
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    expect(Buffer.from(await res.arrayBuffer())).toEqual(BIG);
    const small = await t.api('GET', `/inbound/messages/${id}/attachments/0`);
    expect([small.status, small.body]).toEqual([200, SMALL.toString()]);
    expect((await fetch(url)).status).toBe(401);
  });

  it('answers 404 for an unknown id and an index with no attachment, 403 to another channel and account', async () => {
    expect((await t.api('GET', '/inbound/messages/00000000-0000-4000-8000-000000000000')).body.code).toBe('not_found');
    // A malformed id is a malformed request, as on every resource: 422 invalid_format on /id.
    for (const path of ['/inbound/messages/not-an-id', '/inbound/messages/not-an-id/raw', '/inbound/messages/not-an-id/attachments/0']) {
      expect((await t.api('GET', path)).body.errors, path).toMatchObject({ '/id': [{ code: 'invalid_format' }] });
    }
    expect((await t.api('GET', `/inbound/messages/${id}/attachments/2`)).body.code).toBe('not_found');
    expect((await t.api('GET', `/inbound/messages/${id}/attachments/-1`)).status).toBe(422);
    const other = await newAccount(t);
    const sibling = await channelKey(t, t.accountId, await newChannel(t, undefined, 'sibling'));
    for (const key of [other.key, sibling]) {
      for (const path of [`/inbound/messages/${id}`, `/inbound/messages/${id}/raw`, `/inbound/messages/${id}/attachments/1`]) {
        expect((await t.api('GET', path, { key })).body.code, path).toBe('forbidden');
      }
    }
  });
});

describe('POST /inbound/messages/{id}/retry', () => {
  it('makes a failed message due again: POSTed anew, its earlier attempts kept', async () => {
    let down = true;
    receiver.on('/flaky', () => (down ? { status: 500, body: 'down' } : { status: 200 }));
    const r = await route('flaky', '/flaky');
    await send(`flaky@${domain}`, 'Nach dem Ausfall');
    const [failed] = await listed(r.id, 'failed');
    const before = failed.attemptCount;
    down = false;
    const res = await t.api('POST', `/inbound/messages/${failed.id}/retry`);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ id: failed.id, status: 'received', nextAttemptAt: expect.any(String) });
    expect(res.body.attempts).toHaveLength(before);
    const [again] = await listed(r.id, 'posted');
    expect(again.attemptCount).toBe(before + 1);
    expect(receiver.at('/flaky').at(-1)!.json.subject).toBe('Nach dem Ausfall');
  });

  it('answers 409 conflict for a posted message and for one already due, 404 unknown, 403 to a channel key', async () => {
    const r = await route('due', '/due');
    await send(`due@${domain}`, 'Schon zugestellt');
    const [posted] = await listed(r.id, 'posted');
    expect((await t.api('POST', `/inbound/messages/${posted.id}/retry`)).body).toMatchObject({ status: 409, code: 'conflict' });

    await t.daemon.inboundPoster!.stop();
    try {
      await send(`due@${domain}`, 'Wartet noch');
      const [waiting] = await listed(r.id, 'received');
      expect((await t.api('POST', `/inbound/messages/${waiting.id}/retry`)).body.code).toBe('conflict');
    } finally {
      await t.daemon.inboundPoster!.start();
    }
    expect((await t.api('POST', '/inbound/messages/00000000-0000-4000-8000-000000000000/retry')).status).toBe(404);
    const own = await channelKey(t, t.accountId, channelId);
    expect((await t.api('POST', `/inbound/messages/${posted.id}/retry`, { key: own })).body.code).toBe('forbidden');
    await listed(r.id, 'posted', 2);
  });
});

describe('GET /inbound/statistics/daily', () => {
  it('counts the messages received per UTC day and channel, zeros included, in the key scope', async () => {
    const counted = await newChannel(t, undefined, 'counted');
    const other = await newChannel(t, undefined, 'uncounted');
    await route('counted', '/counted', { channel: counted });
    await route('uncounted', '/uncounted', { channel: other });
    const day = (ms: number) => new Date(ms).toISOString().slice(0, 10);
    // Sums over the days asked for: a run across UTC midnight counts on two days.
    const sum = (results: { received: number }[]) => results.reduce((n, r) => n + r.received, 0);
    const started = Date.now();
    await send(`counted@${domain}`, 'Eins');
    await send(`counted@${domain}`, 'Zwei');
    await send(`uncounted@${domain}`, 'Drei');
    const res = await t.api('GET', `/inbound/statistics/daily?channelId=${counted}&from=${day(started - 86_400_000)}T00:00:00Z`);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.results[0]).toEqual({ date: day(started - 86_400_000), received: 0 });
    expect(res.body.results.at(-1).date).toBe(day(Date.now()));
    expect(sum(res.body.results)).toBe(2);
    const own = await t.api('GET', `/inbound/statistics/daily?from=${day(started)}T00:00:00Z`, { key: await channelKey(t, t.accountId, other) });
    expect(sum(own.body.results)).toBe(1);
    const month = await t.api('GET', '/inbound/statistics/daily');
    expect(month.body.results).toHaveLength(30);
    expect(month.body.results.at(-1).date).toBe(day(Date.now()));
    expect(sum(month.body.results)).toBeGreaterThanOrEqual(3);
  }, 30_000);

  it('answers 422 for a range too long or backwards and a malformed channel, 403 for another channel of a channel key', async () => {
    const long = await t.api('GET', '/inbound/statistics/daily?from=2020-01-01T00:00:00Z&to=2021-06-01T00:00:00Z');
    expect([long.status, long.body.errors?.['/from']?.[0]?.code]).toEqual([422, 'range_too_long']);
    const backwards = await t.api('GET', '/inbound/statistics/daily?from=2021-01-02T00:00:00Z&to=2021-01-01T00:00:00Z');
    expect([backwards.status, backwards.body.errors?.['/to']?.[0]?.code]).toEqual([422, 'invalid_range']);
    const malformed = await t.api('GET', '/inbound/statistics/daily?channelId=nope');
    expect([malformed.status, malformed.body.errors?.['/channelId']?.[0]?.code]).toEqual([422, 'invalid_format']);
    const key = await channelKey(t, t.accountId, await newChannel(t, undefined, 'scoped'));
    const forbidden = await t.api('GET', `/inbound/statistics/daily?channelId=${channelId}`, { key });
    expect(forbidden.status).toBe(403);
  });
});
