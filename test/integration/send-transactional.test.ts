import { simpleParser } from 'mailparser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DeliveryJob } from '../../src/domain/types.js';
import { startDaemonWithDns, stopDaemonWithDns, type TestDaemon } from '../support/daemon.js';
import type { TestDns } from '../support/dns-server.js';
import { newAccount } from '../support/domains.js';
import { setupSender, type Sender } from '../support/sending.js';
import { finishedMessage, signedBody, verifyDkim } from '../support/signing.js';

let dns: TestDns;
let t: TestDaemon;
let live: Sender;

const send = (body: unknown, opts: { channel?: string | null; key?: string; headers?: Record<string, string> } = {}) => {
  const headers: Record<string, string> = { ...opts.headers };
  const channel = opts.channel === undefined ? live.channelId : opts.channel;
  if (channel) headers['x-service-channel-id'] = channel;
  return t.api('POST', '/send/transactional', { body, key: opts.key, headers });
};

const basic = () => ({
  from: { email: `news@${live.domain}`, name: 'News' },
  to: [{ email: 'alice@example.net', name: 'Alice' }],
  subject: 'Hello',
  text: 'Hi there',
  html: '<p>Hi there</p>',
});

async function jobsOf(messageId: string): Promise<DeliveryJob[]> {
  return (await t.daemon.store.queue.jobsOfMessage(messageId));
}

beforeAll(async () => {
  ({ t, dns } = await startDaemonWithDns());
  live = await setupSender(t, dns);
});

afterAll(() => stopDaemonWithDns({ t, dns }));

describe('POST /send/transactional', () => {
  it('accepts a message, stores it durably with one job per recipient domain and the accepted and processed events', async () => {
    const res = await send({ ...basic(), cc: [{ email: 'bob@example.org' }], bcc: [{ email: 'carol@example.org' }], tags: ['welcome'], metadata: { user: 42 } });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ status: 'accepted', messageId: expect.stringMatching(/^[0-9a-f-]{36}$/), suppressions: [] });
    const m = (await t.daemon.store.messages.get(res.body.messageId))!;
    expect(m).toMatchObject({ status: 'queued', mailType: 'transactional', mailSource: 'api', deliveryType: 'live', subject: 'Hello', tags: ['welcome'], metadata: { user: '42' } });
    expect(m.recipients.sort()).toEqual(['alice@example.net', 'bob@example.org', 'carol@example.org']);
    const jobs = await jobsOf(m.id);
    expect(jobs.map((j) => j.domain).sort()).toEqual(['example.net', 'example.org']);
    expect(jobs.find((j) => j.domain === 'example.org')!.recipients.sort()).toEqual(['bob@example.org', 'carol@example.org']);
    expect((await t.daemon.store.events.ofMessage(m.id)).map((e) => e.eventType)).toEqual(['accepted', 'processed']);
  });

  it('signs the message with the domain key so an independent verifier passes it against the published DNS record', async () => {
    const res = await send(basic());
    const raw = await signedBody(t.daemon.store, res.body.messageId);
    const result = await verifyDkim(dns, raw);
    expect(result.results.map((r: { status: { result: string } }) => r.status.result)).toEqual(['pass']);
    expect(result.results[0].signingDomain).toBe(live.domain);
    const parsed = await simpleParser(raw);
    expect(parsed.messageId).toBe(`<${res.body.messageId}@${live.domain}>`);
    expect(parsed.headers.has('bcc')).toBe(false);
  });

  it('renders a Handlebars template with escaped and raw variables and inlines styles', async () => {
    const res = await send({
      from: { email: `news@${live.domain}` },
      to: [{ email: 'alice@example.net' }],
      template: {
        subject: 'Hi {{name}}',
        html: '<style>p{color:red}</style><p>{{name}} {{{raw}}}</p>',
        text: 'Hi {{name}}',
        inlineStyles: true,
        data: { name: '<Ann>', raw: '<b>bold</b>' },
      },
    });
    expect(res.status).toBe(200);
    // The subject is rendered at intake; the html with the message, after the commit (signing.ts).
    expect((await t.daemon.store.messages.get(res.body.messageId))!.subject).toBe('Hi <Ann>');
    await signedBody(t.daemon.store, res.body.messageId);
    const m = (await t.daemon.store.messages.get(res.body.messageId))!;
    expect(m.subject).toBe('Hi <Ann>');
    expect(m.html).toContain('&lt;Ann&gt;');
    expect(m.html).toContain('<b>bold</b>');
    expect(m.html).toMatch(/<p style="color: ?red;?">/);
  });

  it('answers 422 templating_error naming the template field that failed', async () => {
    const res = await send({ from: { email: `news@${live.domain}` }, to: [{ email: 'a@example.net' }], template: { subject: 'x', html: '{{#if}}broken' } });
    expect(res.status).toBe(422);
    expect(res.body.code).toBe('templating_error');
    expect(Object.keys(res.body.errors)).toEqual(['/template/html']);
  });

  it('holds a template\'s rendered subject to the 256 characters of a subject (spec section 8), counted in characters', async () => {
    const base = { from: { email: `news@${live.domain}` }, to: [{ email: 'a@example.net' }] };
    const literal = await send({ ...base, template: { subject: 's'.repeat(257), text: 'x' } });
    expect(literal.status).toBe(422);
    expect(literal.body.code).toBe('validation_failed');
    expect(literal.body.errors).toEqual({ '/template/subject': [{ code: 'max_length', message: 'must be at most 256 characters once rendered' }] });
    const fromData = await send({ ...base, template: { subject: 'Hi {{name}}', text: 'x', data: { name: 'n'.repeat(300) } } });
    expect(fromData.status).toBe(422);
    expect(Object.keys(fromData.body.errors)).toEqual(['/template/subject']);
    // 256 characters outside the Basic Multilingual Plane are 512 UTF-16 code units: still a subject of 256.
    const astral = await send({ ...base, template: { subject: '{{e}}', text: 'x', data: { e: '😀'.repeat(256) } } });
    expect(astral.status).toBe(200);
    expect((await t.daemon.store.messages.get(astral.body.messageId))!.subject).toBe('😀'.repeat(256));
  });

  it('checks a large part never seen before on a worker thread: the same 422 with its place, and a good one is sent', async () => {
    // Over MAIN_THREAD_MAX (template-check.ts): the main thread does not compile it.
    const filler = '<p>Line of a long template.</p>\n'.repeat(300);
    const bad = await send({ from: { email: `news@${live.domain}` }, to: [{ email: 'a@example.net' }], template: { subject: 'x', html: `${filler}{{shout name}}`, text: `${filler}{{#each}}{{/each}}` } });
    expect(bad.status).toBe(422);
    expect(bad.body.code).toBe('templating_error');
    expect(Object.keys(bad.body.errors)).toEqual(['/template/html']);
    expect(JSON.stringify(bad.body.errors['/template/html'])).toMatch(/shout.*"line":301/);
    const good = await send({ from: { email: `news@${live.domain}` }, to: [{ email: 'a@example.net' }], template: { subject: 'Hi {{name}}', html: `${filler}<b>{{name}}</b>`, data: { name: 'Ann' } } });
    expect(good.status).toBe(200);
    await signedBody(t.daemon.store, good.body.messageId);
    expect((await t.daemon.store.messages.get(good.body.messageId))!.html).toContain('<b>Ann</b>');
  });
});

describe('channel resolution', () => {
  it('needs X-Service-Channel-Id with an account-level key (422 invalid_channel)', async () => {
    const res = await send(basic(), { channel: null });
    expect(res.status).toBe(422);
    expect(res.body.code).toBe('invalid_channel');
  });

  it('answers 404 channel_not_found for an unknown channel and 403 for another account\'s channel', async () => {
    expect((await send(basic(), { channel: '00000000-0000-4000-8000-000000000000' })).body.code).toBe('channel_not_found');
    const { key: token } = await newAccount(t);
    const res = await send(basic(), { key: token });
    expect(res.status).toBe(403);
  });

  it('uses a channel key\'s own channel and refuses a header naming another channel', async () => {
    const { token } = await t.daemon.store.apiKeys.create({ accountId: t.accountId, channelId: live.channelId });
    expect((await send(basic(), { key: token, channel: null })).status).toBe(200);
    const other = await t.api('POST', '/channels', { body: { name: 'other' } });
    expect((await send(basic(), { key: token, channel: other.body.id })).status).toBe(403);
  });
});

describe('validation', () => {
  it('reports every broken field together with JSON pointers', async () => {
    const res = await send({
      from: { email: 'not-an-address' },
      to: Array.from({ length: 51 }, (_, i) => ({ email: `r${i}@example.net` })),
      subject: 'x'.repeat(257),
      text: 'hi',
      tags: ['a', 'b', 'c', 'd', 'e', 'f'],
      metadata: Object.fromEntries(Array.from({ length: 11 }, (_, i) => [`k${i}`, 'v'])),
    });
    expect(res.status).toBe(422);
    expect(res.body.code).toBe('validation_failed');
    expect(Object.keys(res.body.errors)).toEqual(expect.arrayContaining(['/to', '/subject', '/tags', '/metadata']));
    expect(res.body.errors['/subject'][0].code).toBe('max_length');
  });

  it('refuses 51 recipients across to, cc and bcc', async () => {
    const many = (n: number, p: string) => Array.from({ length: n }, (_, i) => ({ email: `${p}${i}@example.net` }));
    const res = await send({ ...basic(), to: many(20, 't'), cc: many(20, 'c'), bcc: many(11, 'b') });
    expect(res.status).toBe(422);
    expect(res.body.errors['/to'][0].code).toBe('max_items');
    expect((await send({ ...basic(), to: many(20, 't'), cc: many(20, 'c'), bcc: many(10, 'b') })).status).toBe(200);
  });

  it('checks tags, metadata keys and values, and address length', async () => {
    const res = await send({
      ...basic(),
      to: [{ email: `${'a'.repeat(64)}@${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(63)}.com` }],
      tags: ['ok-tag', 'bad tag!', 'x'.repeat(101)],
      metadata: { ['k'.repeat(51)]: 'v', fine: 'v'.repeat(101) },
    });
    expect(res.status).toBe(422);
    expect(res.body.errors['/to/0/email'][0].code).toBe('max_length');
    expect(res.body.errors['/tags/1']).toBeDefined();
    expect(res.body.errors['/tags/2'][0].code).toBe('max_length');
    expect(res.body.errors['/metadata']).toBeDefined();
    expect(res.body.errors['/metadata/fine'][0].code).toBe('max_length');
  });

  it('refuses header injection, structural headers and more than 5,000 characters of headers', async () => {
    const r1 = await send({ ...basic(), headers: { 'X-Ok': 'fine', 'X-Evil': 'a\r\nBcc: victim@example.com', From: 'spoof@example.com' } });
    expect(r1.status).toBe(422);
    expect(r1.body.errors['/headers/X-Evil'][0].code).toBe('invalid_format');
    expect(r1.body.errors['/headers/From'][0].code).toBe('forbidden_header');
    const r2 = await send({ ...basic(), headers: { 'X-Big': 'x'.repeat(5000) } });
    expect(r2.body.errors['/headers'][0].code).toBe('max_length');
    const r3 = await send({ ...basic(), subject: 'Hi\r\nBcc: victim@example.com' });
    expect(r3.body.errors['/subject'][0].code).toBe('invalid_format');
  });

  it('refuses invalid base64 and executable attachments by extension and by type', async () => {
    const res = await send({
      ...basic(),
      attachments: [
        { content: 'not base64!', fileName: 'a.txt' },
        { content: Buffer.from('MZ').toString('base64'), fileName: 'setup.exe' },
        { content: Buffer.from('x').toString('base64'), fileName: 'report.pdf', contentType: 'application/x-msdownload' },
        { content: Buffer.from('%PDF').toString('base64'), fileName: 'fine.pdf' },
        { content: '\r\n', fileName: 'empty.txt' },
      ],
    });
    expect(res.status).toBe(422);
    expect(Object.keys(res.body.errors).sort()).toEqual(['/attachments/0/content', '/attachments/1/fileName', '/attachments/2/contentType', '/attachments/4/content']);
    expect(res.body.errors['/attachments/4/content']).toEqual([{ code: 'min_length', message: 'must not be empty' }]);
  });

  it('blocks names Windows turns into executables (trailing dots and spaces) like the plain name', async () => {
    const names = ['a.exe.', 'a.exe ', 'a.scr..', 'a.exe. . ', 'A.EXE.'];
    const res = await send({ ...basic(), attachments: names.map((fileName) => ({ content: Buffer.from('MZ').toString('base64'), fileName })) });
    expect(res.status).toBe(422);
    expect(Object.keys(res.body.errors).sort()).toEqual(names.map((_, i) => `/attachments/${i}/fileName`).sort());
    for (const list of Object.values(res.body.errors) as Array<Array<{ code: string }>>) expect(list[0].code).toBe('blocked_type');
  });

  it('keeps attachments and reports them in the stored message', async () => {
    const res = await send({ ...basic(), attachments: [{ content: Buffer.from('hello pdf').toString('base64'), fileName: 'r.pdf' }] });
    expect(res.status).toBe(200);
    expect((await t.daemon.store.messages.get(res.body.messageId))!.attachments).toEqual([{ fileName: 'r.pdf', disposition: 'attachment', size: 9, contentType: 'application/pdf' }]);
    const parsed = await simpleParser(await signedBody(t.daemon.store, res.body.messageId));
    expect(parsed.attachments[0].content.toString()).toBe('hello pdf');
  });

  it('takes an attachment type with parameters (mime-types gives "text/plain; charset=utf-8") and writes it to the part', async () => {
    const res = await send({
      ...basic(),
      attachments: [
        { content: Buffer.from('hello').toString('base64'), fileName: 'a.txt', contentType: 'text/plain; charset=utf-8' },
        { content: Buffer.from('a;b').toString('base64'), fileName: 'r.csv', contentType: 'text/csv;charset="iso-8859-1"; header=present' },
      ],
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const parsed = await simpleParser(await signedBody(t.daemon.store, res.body.messageId));
    expect(parsed.attachments.map((a) => [a.contentType, a.headers.get('content-type')])).toEqual([
      ['text/plain', expect.objectContaining({ params: expect.objectContaining({ charset: 'utf-8' }) })],
      ['text/csv', expect.objectContaining({ params: expect.objectContaining({ charset: 'iso-8859-1', header: 'present' }) })],
    ]);
  });

  it('still blocks an executable type given with parameters, and refuses a type that could end the header', async () => {
    const content = Buffer.from('MZ').toString('base64');
    const blocked = await send({ ...basic(), attachments: [{ content, fileName: 'report.pdf', contentType: 'Application/X-MSDownload; name=report.pdf' }] });
    expect(blocked.status).toBe(422);
    expect(blocked.body.errors['/attachments/0/contentType'][0].code).toBe('blocked_type');
    const res = await send({
      ...basic(),
      attachments: [
        { content, fileName: 'b.txt', contentType: 'text/plain; charset=utf-8\r\nBcc: eve@example.org' },
        { content, fileName: 'c.txt', contentType: 'text/plain; charset' },
      ],
    });
    expect(res.status).toBe(422);
    expect(Object.keys(res.body.errors).sort()).toEqual(['/attachments/0/contentType', '/attachments/1/contentType']);
    for (const list of Object.values(res.body.errors) as Array<Array<{ code: string }>>) expect(list[0].code).toBe('invalid_format');
  });

  it('makes template and subject/html/text mutually exclusive and requires content', async () => {
    const r1 = await send({ ...basic(), template: { subject: 's', text: 't' } });
    expect(r1.body.errors['/subject'][0].code).toBe('conflict');
    const r2 = await send({ from: basic().from, to: basic().to });
    expect(Object.keys(r2.body.errors).sort()).toEqual(['/html', '/subject']);
  });

  it('refuses unknown properties instead of dropping them', async () => {
    const res = await send({ ...basic(), sendAt: 'tomorrow' });
    expect(res.status).toBe(422);
    expect(res.body.errors['/sendAt'][0].code).toBe('unknown_field');
  });
});

describe('sender domain', () => {
  it('refuses a from domain that is not linked to the channel (422 on /from/email)', async () => {
    const res = await send({ ...basic(), from: { email: 'me@unlinked-domain.com' } });
    expect(res.status).toBe(422);
    expect(res.body.errors['/from/email'][0].code).toBe('domain_not_linked');
  });

  it('refuses an unverified domain on a live channel with 403 domain_unverified, but lets a sandbox channel use it', async () => {
    const unverified = await setupSender(t, dns, { verify: false });
    const res = await send({ ...basic(), from: { email: `x@${unverified.domain}` } }, { channel: unverified.channelId });
    expect(res.status).toBe(403);
    expect(res.body.code).toBe('domain_unverified');
    const sandbox = await setupSender(t, dns, { verify: false, deliveryType: 'sandbox' });
    const ok = await send({ ...basic(), from: { email: `x@${sandbox.domain}` } }, { channel: sandbox.channelId });
    expect(ok.status).toBe(200);
  });
});

describe('suppressions', () => {
  it('drops suppressed recipients, lists them, and answers 422 recipients_suppressed when none is left', async () => {
    const add = await t.api('POST', '/suppressions', { body: { channelId: live.channelId, mailType: 'transactional', emails: ['Gone@Example.net', 'bad address'] } });
    expect(add.status).toBe(200);
    expect(add.body.results).toEqual([
      { email: 'gone@example.net', success: true, message: 'suppressed' },
      { email: 'bad address', success: false, message: expect.stringContaining('invalid address') },
    ]);
    const partial = await send({ ...basic(), to: [{ email: 'gone@example.net' }, { email: 'stay@example.net' }] });
    expect(partial.body.suppressions).toEqual(['gone@example.net']);
    expect((await t.daemon.store.messages.get(partial.body.messageId))!.recipients).toEqual(['stay@example.net']);
    const none = await send({ ...basic(), to: [{ email: 'gone@example.net' }] });
    expect(none.status).toBe(422);
    expect(none.body.code).toBe('recipients_suppressed');
    const remove = await t.api('POST', '/suppressions/remove', { body: { channelId: live.channelId, mailType: 'transactional', emails: ['gone@example.net', 'never@example.net'] } });
    expect(remove.body.results.map((r: { success: boolean }) => r.success)).toEqual([true, false]);
    expect((await send({ ...basic(), to: [{ email: 'gone@example.net' }] })).status).toBe(200);
  });

  it('keeps transactional and broadcast lists apart', async () => {
    await t.api('POST', '/suppressions', { body: { channelId: live.channelId, mailType: 'broadcast', emails: ['promo-only@example.net'] } });
    expect((await send({ ...basic(), to: [{ email: 'promo-only@example.net' }] })).status).toBe(200);
  });

  it('refuses another account\'s channel with 403 and an unknown channel with 404', async () => {
    const { key: token } = await newAccount(t);
    const body = { channelId: live.channelId, mailType: 'transactional', emails: ['a@example.net'] };
    expect((await t.api('POST', '/suppressions', { key: token, body })).status).toBe(403);
    expect((await t.api('POST', '/suppressions', { body: { ...body, channelId: '00000000-0000-4000-8000-000000000000' } })).status).toBe(404);
    expect((await t.api('POST', '/suppressions', { key: null, body })).status).toBe(401);
  });
});

describe('account policy', () => {
  it('refuses suspended accounts with 403 account_forbidden', async () => {
    const { accountId, key: token } = await newAccount(t);
    const s = await setupSender(t, dns, { key: token });
    await t.daemon.store.accounts.setState(accountId, 'suspended');
    const res = await send({ ...basic(), from: { email: `x@${s.domain}` } }, { key: token, channel: s.channelId });
    expect(res.status).toBe(403);
    expect(res.body.code).toBe('account_forbidden');
  });
});

describe('idempotency', () => {
  it('replays the first response for the same key and body and sends nothing more', async () => {
    const headers = { 'idempotency-key': `k-${Date.now()}` };
    const first = await send(basic(), { headers });
    const second = await send(basic(), { headers });
    expect(second.status).toBe(200);
    expect(second.body).toEqual(first.body);
    const count = (await t.daemon.store.messages.all()).filter((m) => m.id === first.body.messageId).length;
    expect(count).toBe(1);
  });

  it('runs concurrent requests with one key only once', async () => {
    const headers = { 'idempotency-key': `c-${Date.now()}` };
    const before = (await t.daemon.store.messages.count());
    const [a, b] = await Promise.all([send(basic(), { headers }), send(basic(), { headers })]);
    expect(a.body.messageId).toBe(b.body.messageId);
    expect((await t.daemon.store.messages.count())).toBe(before + 1);
  });

  it('refuses the same key with a different body, and keys over 256 characters', async () => {
    const headers = { 'idempotency-key': `d-${Date.now()}` };
    await send(basic(), { headers });
    const res = await send({ ...basic(), subject: 'Other' }, { headers });
    expect(res.status).toBe(422);
    expect(res.body.errors['/Idempotency-Key'][0].code).toBe('conflict');
    const long = await send(basic(), { headers: { 'idempotency-key': 'x'.repeat(257) } });
    expect(long.status).toBe(422);
    expect(long.body.errors['/Idempotency-Key']).toBeDefined();
  });
});

describe('sandbox channels', () => {
  it('simulates delivery and bounces at the reserved simulator domain, and queues nothing', async () => {
    const sb = await setupSender(t, dns, { deliveryType: 'sandbox' });
    const res = await send(
      { ...basic(), from: { email: `x@${sb.domain}` }, to: [{ email: 'ok@example.net' }, { email: 'nobody@bounce.postrider.invalid' }] },
      { channel: sb.channelId },
    );
    expect(res.status).toBe(200);
    expect(await jobsOf(res.body.messageId)).toEqual([]);
    // The simulated outcome is recorded once the message is composed, in the same write.
    await finishedMessage(t.daemon.store, res.body.messageId);
    const events = (await t.daemon.store.events.ofMessage(res.body.messageId));
    expect(events.map((e) => [e.eventType, e.recipients])).toEqual([
      ['accepted', ['ok@example.net', 'nobody@bounce.postrider.invalid']],
      ['processed', ['ok@example.net', 'nobody@bounce.postrider.invalid']],
      ['delivered', ['ok@example.net']],
      ['bounced', ['nobody@bounce.postrider.invalid']],
    ]);
    const again = await send({ ...basic(), from: { email: `x@${sb.domain}` }, to: [{ email: 'nobody@bounce.postrider.invalid' }] }, { channel: sb.channelId });
    expect(again.body.code).toBe('recipients_suppressed');
  });
});
