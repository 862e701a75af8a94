/**
 * Sending by stored template (issue 34) through the real daemon: `template: {id | alias,
 * version?, data}` on /send/transactional, each batch entry, /send/broadcast and
 * /send/broadcast/message. A real MX on 127.0.48.2 shows what went out; message details name the
 * template and version. A message waiting for its time keeps the content it was committed with
 * after the template changes or goes. Every field error and the 403s of a send that names a
 * template are triggered here.
 */
import { simpleParser } from 'mailparser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ApiResponse, TestDaemon } from '../support/daemon.js';
import { startDeliveryRig, type DeliveryRig } from '../support/delivery-rig.js';
import { channelKey, newAccount } from '../support/domains.js';
import type { MxServer } from '../support/mx-server.js';
import type { Sender } from '../support/sending.js';
import { waitFor } from '../support/wait.js';

const RCPT_DOMAIN = 'stored-template-mail.net';
const UNKNOWN = '00000000-0000-4000-8000-000000000000';

let mx: MxServer;
let t: TestDaemon;
let s: Sender;
let rig: DeliveryRig | undefined;

beforeAll(async () => {
  rig = await startDeliveryRig({ mx: { address: '127.0.48.2', starttls: false }, domains: [RCPT_DOMAIN] });
  ({ mx, t, s } = rig);
});

afterAll(() => rig?.stop());

let seq = 0;
/** A recipient no other test sends to. */
function rcpt(name: string): string {
  return `${name}-${++seq}@${RCPT_DOMAIN}`;
}

/** A template with the defaults below under `body`'s fields (`null`: without that part). */
async function createTemplate(body: Record<string, unknown>, key?: string): Promise<any> {
  const fields = { name: 'Welcome', subject: 'Hi {{name}}', text: 'Hello {{name}}, v1', html: '<p>Hello {{name}}, v1</p>', ...body };
  const res = await t.api('POST', '/templates', { key, body: Object.fromEntries(Object.entries(fields).filter(([, v]) => v !== null)) });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body;
}

function mail(to: string, template: Record<string, unknown>, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { from: { email: `app@${s.domain}` }, to: [{ email: to }], template, ...extra };
}

function send(body: Record<string, unknown>, o: { key?: string; path?: string } = {}): Promise<ApiResponse> {
  // A channel key sends through its channel; an account key names it.
  const headers: Record<string, string> = o.key ? {} : { 'x-service-channel-id': s.channelId };
  return t.api('POST', o.path ?? '/send/transactional', { key: o.key, headers, body });
}

async function accepted(res: ApiResponse): Promise<string> {
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.messageId as string;
}

/** The subject and text part the MX received for `to`. */
async function delivered(to: string): Promise<{ subject: string; text: string; html: string }> {
  const got = await waitFor(() => mx.received.find((m) => m.to.includes(to)), { what: `the delivery to ${to}`, timeout: 15_000 });
  const parsed = await simpleParser(got.raw);
  return { subject: parsed.subject ?? '', text: (parsed.text ?? '').trim(), html: typeof parsed.html === 'string' ? parsed.html : '' };
}

function details(id: string): Promise<ApiResponse> {
  return t.api('GET', `/activity/messages/${id}`);
}

function fieldCodes(res: ApiResponse): Record<string, string[]> {
  expect(res.status, JSON.stringify(res.body)).toBe(422);
  expect(res.body.code).toBe('validation_failed');
  return Object.fromEntries(Object.entries(res.body.errors as Record<string, Array<{ code: string }>>).map(([p, list]) => [p, list.map((e) => e.code)]));
}

describe('sending by stored template', () => {
  it('sends the active version by id and by alias, rendered with the data, and message details name the template and version', async () => {
    const tpl = await createTemplate({ alias: 'welcome-a' });
    const [ann, bob] = [rcpt('ann'), rcpt('bob')];
    const byId = await accepted(await send(mail(ann, { id: tpl.id, data: { name: 'Ann' } })));
    const byAlias = await accepted(await send(mail(bob, { alias: 'welcome-a', data: { name: 'Bob' } })));
    expect(await delivered(ann)).toMatchObject({ subject: 'Hi Ann', text: 'Hello Ann, v1', html: expect.stringContaining('<p>Hello Ann, v1</p>') });
    expect(await delivered(bob)).toMatchObject({ subject: 'Hi Bob', text: 'Hello Bob, v1' });
    for (const id of [byId, byAlias]) {
      const d = await details(id);
      expect(d.body).toMatchObject({ subject: expect.stringMatching(/^Hi (Ann|Bob)$/), template: { id: tpl.id, alias: 'welcome-a', version: 1 } });
    }
    // A send with inline content names no template.
    const inline = await accepted(await send(mail(rcpt('cy'), { subject: 'Inline', text: 'x' })));
    expect((await details(inline)).body.template).toBeUndefined();
  });

  it('sends an older version when asked, the active one otherwise', async () => {
    const tpl = await createTemplate({});
    const v2 = await t.api('PATCH', `/templates/${tpl.id}`, { body: { subject: 'Hey {{name}}', text: 'Hello {{name}}, v2', html: null } });
    expect(v2.body.activeVersion).toBe(2);
    const [old, now] = [rcpt('dee'), rcpt('eve')];
    const oldId = await accepted(await send(mail(old, { id: tpl.id, version: 1, data: { name: 'Dee' } })));
    const nowId = await accepted(await send(mail(now, { id: tpl.id, data: { name: 'Eve' } })));
    expect(await delivered(old)).toMatchObject({ subject: 'Hi Dee', text: 'Hello Dee, v1', html: expect.stringContaining('v1') });
    expect(await delivered(now)).toEqual({ subject: 'Hey Eve', text: 'Hello Eve, v2', html: '' });
    expect((await details(oldId)).body.template).toEqual({ id: tpl.id, version: 1 });
    expect((await details(nowId)).body.template).toEqual({ id: tpl.id, version: 2 });
  });

  it('keeps what a waiting message was committed with when the template is patched, activated back and deleted', async () => {
    const tpl = await createTemplate({ alias: 'waiting' });
    const to = rcpt('fay');
    const at = new Date(Date.now() + 2000).toISOString();
    const id = await accepted(await send(mail(to, { alias: 'waiting', data: { name: 'Fay' } }, { scheduledAt: at })));
    expect((await details(id)).body).toMatchObject({ status: 'scheduled', template: { id: tpl.id, version: 1 } });
    const patched = await t.api('PATCH', '/templates/waiting', { body: { subject: 'Changed {{name}}', text: 'Changed', html: null } });
    expect(patched.status).toBe(200);
    expect((await t.api('POST', `/templates/${tpl.id}/activate`, { body: { version: 1 } })).status).toBe(200);
    expect((await t.api('DELETE', `/templates/${tpl.id}`)).status).toBe(204);
    expect(await delivered(to)).toMatchObject({ subject: 'Hi Fay', text: 'Hello Fay, v1' });
    expect((await details(id)).body.template).toEqual({ id: tpl.id, alias: 'waiting', version: 1 });
    // Gone now: naming it again is a field error.
    expect(fieldCodes(await send(mail(rcpt('gus'), { alias: 'waiting' })))).toEqual({ '/template/alias': ['unknown_template'] });
  });

  it('answers unknown_template, a version the template lacks and a malformed reference with 422 and their pointers', async () => {
    const tpl = await createTemplate({ alias: 'known' });
    const to = rcpt('hal');
    expect(fieldCodes(await send(mail(to, { id: UNKNOWN })))).toEqual({ '/template/id': ['unknown_template'] });
    expect(fieldCodes(await send(mail(to, { alias: 'nope' })))).toEqual({ '/template/alias': ['unknown_template'] });
    expect(fieldCodes(await send(mail(to, { alias: 'known', version: 9 })))).toEqual({ '/template/version': ['invalid_value'] });
    expect(fieldCodes(await send(mail(to, { id: tpl.id, alias: 'known' })))).toEqual({ '/template/alias': ['conflict'] });
    expect(fieldCodes(await send(mail(to, { version: 1, data: {} })))).toEqual({ '/template/id': ['required'] });
    expect(fieldCodes(await send(mail(to, { id: tpl.id, subject: 'x', html: '<p>x</p>' })))).toEqual({ '/template/subject': ['conflict'], '/template/html': ['conflict'] });
    expect(fieldCodes(await send({ ...mail(to, { id: tpl.id }), text: 'x' }))).toEqual({ '/text': ['conflict'] });
    // The schema: an id is a UUID, an alias has the alias form, a version is an integer from 1.
    expect(fieldCodes(await send(mail(to, { id: 'welcome', alias: 'Known', version: 0 })))).toEqual({
      '/template/id': ['invalid_format'],
      '/template/alias': ['invalid_format'],
      '/template/version': ['min_value'],
    });
    // Beside the body's other field errors (its rules after the schema), in one answer.
    const both = await send({ ...mail(to, { alias: 'nope' }), headers: { Subject: 'x' } });
    expect(fieldCodes(both)).toEqual({ '/template/alias': ['unknown_template'], '/headers/Subject': ['forbidden_header'] });
    expect(mx.received.some((m) => m.to.includes(to))).toBe(false);
  });

  it('lets a channel key send the templates linked to its channel only, and answers 403 for another account\'s template', async () => {
    const linked = await createTemplate({ channelIds: [s.channelId] });
    const unlinked = await createTemplate({ channelIds: [] });
    const key = await channelKey(t, t.accountId, s.channelId);
    const to = rcpt('ida');
    await accepted(await send(mail(to, { id: linked.id, data: { name: 'Ida' } }), { key }));
    expect(await delivered(to)).toMatchObject({ subject: 'Hi Ida' });
    for (const ref of [{ id: unlinked.id }, { id: unlinked.id, version: 1 }, { id: unlinked.id, version: 5 }]) {
      const res = await send(mail(rcpt('jo'), ref), { key });
      expect([res.status, res.body.code], JSON.stringify(ref)).toEqual([403, 'forbidden']);
    }
    // The account key may send it.
    await accepted(await send(mail(rcpt('kim'), { id: unlinked.id, data: { name: 'Kim' } })));

    const other = await newAccount(t);
    const theirs = await createTemplate({ alias: 'theirs' }, other.key);
    const foreign = await send(mail(rcpt('lee'), { id: theirs.id }));
    expect([foreign.status, foreign.body.code]).toEqual([403, 'forbidden']);
    const foreignVersion = await send(mail(rcpt('lee'), { id: theirs.id, version: 1 }));
    expect([foreignVersion.status, foreignVersion.body.code]).toEqual([403, 'forbidden']);
    // Aliases are the account's own names: another account's is unknown here.
    expect(fieldCodes(await send(mail(rcpt('lee'), { alias: 'theirs' })))).toEqual({ '/template/alias': ['unknown_template'] });
  });

  it('sends a batch whose entries name two templates, reading each once, each entry failing alone', async () => {
    const a = await createTemplate({ alias: 'batch-a', subject: 'A {{name}}', text: 'A text {{name}}' });
    const b = await createTemplate({ alias: 'batch-b', subject: 'B {{name}}', text: 'B text {{name}}', html: null });
    const unlinked = await createTemplate({ channelIds: [] });
    const to = [rcpt('mo'), rcpt('ned'), rcpt('oli'), rcpt('pia'), rcpt('quinn')];
    const store = t.daemon.store.templates;
    const original = store.version;
    let reads = 0;
    store.version = (...args: Parameters<typeof original>) => {
      reads++;
      return original.apply(store, args);
    };
    let res: ApiResponse;
    try {
      res = await t.api('POST', '/send/transactional/batch', {
        headers: { 'x-service-channel-id': s.channelId },
        body: {
          requests: [
            mail(to[0], { id: a.id, data: { name: 'Mo' } }),
            mail(to[1], { alias: 'batch-b', data: { name: 'Ned' } }),
            mail(to[2], { id: a.id, data: { name: 'Oli' } }),
            mail(to[3], { alias: 'batch-b', data: { name: 'Pia' } }),
            mail(to[4], { alias: 'batch-none' }),
          ],
        },
      });
    } finally {
      store.version = original;
    }
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const r = res.body.responses;
    expect(r.slice(0, 4).map((x: { status: string }) => x.status)).toEqual(['accepted', 'accepted', 'accepted', 'accepted']);
    expect(r[4]).toMatchObject({ status: 'failed', errorCode: 'validation_failed', errorMessage: expect.stringContaining('/requests/4/template/alias') });
    // Three distinct names (a by id, batch-b, batch-none): one read each, not one per entry.
    expect(reads).toBe(3);
    expect(await delivered(to[0])).toMatchObject({ subject: 'A Mo', text: 'A text Mo' });
    expect(await delivered(to[1])).toMatchObject({ subject: 'B Ned', text: 'B text Ned' });
    expect(await delivered(to[2])).toMatchObject({ subject: 'A Oli' });
    expect(await delivered(to[3])).toMatchObject({ subject: 'B Pia' });
    expect((await details(r[0].messageId)).body.template).toEqual({ id: a.id, alias: 'batch-a', version: 1 });
    expect((await details(r[1].messageId)).body.template).toEqual({ id: b.id, alias: 'batch-b', version: 1 });

    // A channel key's entry naming a template not linked to its channel fails alone, forbidden.
    const key = await channelKey(t, t.accountId, s.channelId);
    const mixed = await t.api('POST', '/send/transactional/batch', {
      key,
      body: { requests: [mail(rcpt('ray'), { id: unlinked.id }), mail(rcpt('sam'), { subject: 'ok', text: 'ok' })] },
    });
    expect(mixed.status, JSON.stringify(mixed.body)).toBe(200);
    expect(mixed.body.responses.map((x: { status: string; errorCode?: string }) => x.errorCode ?? x.status)).toEqual(['forbidden', 'accepted']);
  });

  it('sends a broadcast by stored template, per-entry data over the template data, each message naming the version', async () => {
    const tpl = await createTemplate({ alias: 'news', subject: '{{greeting}} {{name}}', text: '{{greeting}}, {{name}}!', html: null });
    const to = [rcpt('tia'), rcpt('uma')];
    const res = await t.api('POST', '/send/broadcast', {
      headers: { 'x-service-channel-id': s.channelId },
      body: {
        from: { email: `app@${s.domain}` },
        template: { alias: 'news', data: { greeting: 'Hello', name: 'you' } },
        messages: [{ to: [{ email: to[0] }], data: { name: 'Tia' } }, { to: [{ email: to[1] }] }],
      },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    // Patched before the entries are delivered: the broadcast keeps what it was accepted with.
    expect((await t.api('PATCH', '/templates/news', { body: { subject: 'Changed' } })).status).toBe(200);
    expect(await delivered(to[0])).toEqual({ subject: 'Hello Tia', text: 'Hello, Tia!', html: '' });
    expect(await delivered(to[1])).toMatchObject({ subject: 'Hello you', text: 'Hello, you!' });
    const ids = (await t.daemon.store.messages.all()).filter((m) => m.broadcastId === res.body.broadcastId).map((m) => m.id);
    expect(ids).toHaveLength(2);
    for (const id of ids) expect((await details(id)).body.template).toEqual({ id: tpl.id, alias: 'news', version: 1 });
    const broadcast = await t.api('GET', `/broadcasts/${res.body.broadcastId}`);
    expect(broadcast.body).toMatchObject({ subject: '{{greeting}} {{name}}', template: { id: tpl.id, alias: 'news', version: 1 } });

    // The broadcast's errors: a field error on /template/alias, 403 for a template the key may not use.
    const bad = await t.api('POST', '/send/broadcast', {
      headers: { 'x-service-channel-id': s.channelId },
      body: { from: { email: `app@${s.domain}` }, template: { alias: 'nope' }, messages: [{ to: [{ email: rcpt('vic') }] }] },
    });
    expect(fieldCodes(bad)).toEqual({ '/template/alias': ['unknown_template'] });
    const unlinked = await createTemplate({ channelIds: [] });
    const key = await channelKey(t, t.accountId, s.channelId);
    const refused = await t.api('POST', '/send/broadcast', {
      key,
      body: { from: { email: `app@${s.domain}` }, template: { id: unlinked.id }, messages: [{ to: [{ email: rcpt('wes') }] }] },
    });
    expect([refused.status, refused.body.code]).toEqual([403, 'forbidden']);
  });

  it('sends one broadcast message by stored template on /send/broadcast/message, with the version\'s inlineStyles', async () => {
    const tpl = await createTemplate({ alias: 'promo', subject: 'Promo for {{name}}', text: 'Deal, {{name}}', html: '<style>p{color:red}</style><p>Deal, {{name}}</p>', inlineStyles: true });
    const to = rcpt('xia');
    const id = await accepted(await send(mail(to, { alias: 'promo', data: { name: 'Xia' } }), { path: '/send/broadcast/message' }));
    expect(await delivered(to)).toMatchObject({ subject: 'Promo for Xia', text: 'Deal, Xia', html: expect.stringContaining('<p style="color: red;">Deal, Xia</p>') });
    expect((await details(id)).body).toMatchObject({ mailType: 'broadcast', template: { id: tpl.id, alias: 'promo', version: 1 } });
  });
});
