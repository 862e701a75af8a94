/**
 * /templates through the daemon's real HTTP port (issue 34, stored templates): create, read by
 * id and alias, list, patch into new versions, activate, delete; render in the worker pool with
 * templating_error carrying the line and column; every error code a template request can get;
 * the limits of config.templates; and the access rules of channel keys and other accounts.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDaemon, type ApiResponse, type TestDaemon } from '../support/daemon.js';
import { channelKey, newAccount, newChannel } from '../support/domains.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const UNKNOWN = '00000000-0000-4000-8000-000000000000';

let t: TestDaemon;

beforeAll(async () => {
  t = await startDaemon({ 'templates.maxPerAccount': 3, 'templates.maxVersions': 3, 'templates.maxBytes': 2048 });
});
afterAll(() => t.stop());

async function create(key: string, body: Record<string, unknown>): Promise<any> {
  const res = await t.api('POST', '/templates', { key, body: { name: 'Welcome', subject: 'Hi {{name}}', html: '<p>Hi {{name}}</p>', ...body } });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body;
}

function fieldError(res: ApiResponse, code: string, pointer: string): Record<string, unknown> {
  expect(res.status, JSON.stringify(res.body)).toBe(422);
  expect(res.body.code).toBe(code);
  return res.body.errors[pointer][0];
}

describe('stored templates', () => {
  it('stores version 1 active and answers it by id and by alias', async () => {
    const { key } = await newAccount(t);
    const created = await create(key, { alias: 'welcome', text: 'Hi {{name}}', inlineStyles: true });
    expect(created).toEqual({
      id: expect.stringMatching(UUID),
      name: 'Welcome',
      alias: 'welcome',
      channelIds: [],
      activeVersion: 1,
      latestVersion: 1,
      createdAt: expect.any(String),
      updatedAt: created.createdAt,
      version: { version: 1, subject: 'Hi {{name}}', html: '<p>Hi {{name}}</p>', text: 'Hi {{name}}', inlineStyles: true, createdAt: created.createdAt },
    });
    expect((await t.api('GET', `/templates/${created.id}`, { key })).body).toEqual(created);
    expect((await t.api('GET', '/templates/welcome', { key })).body).toEqual(created);
    expect((await t.api('GET', '/templates/welcome?version=2', { key })).status).toBe(404);
    expect((await t.api('GET', `/templates/${UNKNOWN}`, { key })).status).toBe(404);
  });

  it('makes a new active version on patch, lists versions, activates an older one and deletes', async () => {
    const { key } = await newAccount(t);
    const a = await create(key, { alias: 'receipt' });
    const v2 = await t.api('PATCH', `/templates/${a.id}`, { key, body: { subject: 'Receipt {{n}}', html: null, text: 'Total {{total}}' } });
    expect(v2.status, JSON.stringify(v2.body)).toBe(200);
    expect(v2.body).toMatchObject({ activeVersion: 2, latestVersion: 2, version: { version: 2, subject: 'Receipt {{n}}', html: null, text: 'Total {{total}}' } });
    const renamed = await t.api('PATCH', '/templates/receipt', { key, body: { name: 'Receipts', alias: null } });
    expect(renamed.body).toMatchObject({ name: 'Receipts', alias: null, activeVersion: 2 });
    const versions = await t.api('GET', `/templates/${a.id}/versions`, { key });
    expect(versions.body.totalCount).toBe(2);
    expect(versions.body.results.map((v: any) => v.version)).toEqual([1, 2]);
    const back = await t.api('POST', `/templates/${a.id}/activate`, { key, body: { version: 1 } });
    expect(back.body).toMatchObject({ activeVersion: 1, version: { version: 1, html: '<p>Hi {{name}}</p>' } });
    expect(fieldError(await t.api('POST', `/templates/${a.id}/activate`, { key, body: { version: 7 } }), 'validation_failed', '/version').code).toBe('invalid_value');
    expect((await t.api('GET', `/templates/${a.id}?version=2`, { key })).body.version.version).toBe(2);
    expect((await t.api('DELETE', `/templates/${a.id}`, { key })).status).toBe(204);
    expect((await t.api('GET', `/templates/${a.id}`, { key })).status).toBe(404);
  });

  it('renders a version with data in the worker pool, and answers templating_error with line and column', async () => {
    const { key } = await newAccount(t);
    const a = await create(key, { html: '<style>p{color:red}</style><p>Hi {{name}}</p>', text: 'Hi {{name}}', inlineStyles: true });
    const out = await t.api('POST', `/templates/${a.id}/render`, { key, body: { data: { name: 'Ann <3' } } });
    expect(out.status, JSON.stringify(out.body)).toBe(200);
    expect(out.body).toEqual({ version: 1, subject: 'Hi Ann <3', html: expect.stringContaining('<p style="color: red;">Hi Ann &lt;3</p>'), text: 'Hi Ann <3' });
    const broken = await t.api('POST', '/templates', { key, body: { name: 'x', subject: 'ok', html: '<p>\n  {{#if a}}x{{/each}}</p>' } });
    expect(fieldError(broken, 'templating_error', '/html')).toMatchObject({ code: 'templating_error', line: 2 });
    const parse = await t.api('PATCH', `/templates/${a.id}`, { key, body: { text: 'line one\nHi {{name' } });
    expect(fieldError(parse, 'templating_error', '/text')).toMatchObject({ line: 2, column: 6 });
    const helper = await t.api('POST', '/templates', { key, body: { name: 'x', subject: 'a {{nope 1}}', text: 't' } });
    expect(fieldError(helper, 'templating_error', '/subject')).toMatchObject({ line: 1, column: 3 });
    // A helper given an object where it needs a list compiles, and fails only with this data.
    const each = await create(key, { html: undefined, text: '{{#each items}}{{this}}{{/each}}', subject: '{{lookup items 0}}' });
    const old = await t.api('POST', `/templates/${each.id}/render`, { key, body: { data: {}, version: 9 } });
    expect(old.status).toBe(404);
  });

  it('refuses bad bodies: no html or text, an alias of id form or taken, too many bytes', async () => {
    const { key } = await newAccount(t);
    expect(fieldError(await t.api('POST', '/templates', { key, body: { name: 'x', subject: 's' } }), 'validation_failed', '/html').code).toBe('required');
    expect(fieldError(await t.api('POST', '/templates', { key, body: { name: 'x', subject: 's', text: 't', alias: UNKNOWN } }), 'validation_failed', '/alias').code).toBe('invalid_format');
    expect(fieldError(await t.api('POST', '/templates', { key, body: { name: 'x', subject: 's', text: 't', alias: 'Big' } }), 'validation_failed', '/alias').code).toBe('invalid_format');
    await create(key, { alias: 'taken' });
    expect(fieldError(await t.api('POST', '/templates', { key, body: { name: 'x', subject: 's', text: 't', alias: 'taken' } }), 'validation_failed', '/alias').code).toBe('duplicate');
    expect(fieldError(await t.api('POST', '/templates', { key, body: { name: 'x', subject: 's', text: 'é'.repeat(1100) } }), 'validation_failed', '').code).toBe('max_size');
  });

  it('holds the per-account and per-template limits with 403 resource_limit_exceeded', async () => {
    const { key } = await newAccount(t);
    const a = await create(key, {});
    for (let i = 2; i <= 3; i++) expect((await t.api('PATCH', `/templates/${a.id}`, { key, body: { text: `v${i}` } })).status).toBe(200);
    const fourth = await t.api('PATCH', `/templates/${a.id}`, { key, body: { text: 'v4' } });
    expect([fourth.status, fourth.body.code]).toEqual([403, 'resource_limit_exceeded']);
    await create(key, {});
    await create(key, {});
    const over = await t.api('POST', '/templates', { key, body: { name: 'x', subject: 's', text: 't' } });
    expect([over.status, over.body.code]).toEqual([403, 'resource_limit_exceeded']);
  });

  it('lets a channel key read the templates linked to its channel only, and write none', async () => {
    const { key, accountId } = await newAccount(t);
    const ch = await newChannel(t, key);
    const other = await newChannel(t, key);
    const linked = await create(key, { channelIds: [ch], name: 'Linked' });
    const unlinked = await create(key, { channelIds: [other], name: 'Unlinked one' });
    const ck = await channelKey(t, accountId, ch);
    expect((await t.api('GET', `/templates/${linked.id}`, { key: ck })).status).toBe(200);
    expect((await t.api('GET', `/templates/${unlinked.id}`, { key: ck })).status).toBe(403);
    expect((await t.api('POST', `/templates/${linked.id}/render`, { key: ck, body: { data: { name: 'x' } } })).status).toBe(200);
    expect((await t.api('PATCH', `/templates/${linked.id}`, { key: ck, body: { name: 'n' } })).status).toBe(403);
    expect((await t.api('POST', '/templates', { key: ck, body: { name: 'x', subject: 's', text: 't' } })).status).toBe(403);
    const list = await t.api('GET', '/templates', { key: ck });
    expect(list.body.results.map((r: any) => r.id)).toEqual([linked.id]);
    const byName = await t.api('GET', '/templates?name=UNLINKED', { key });
    expect(byName.body).toMatchObject({ totalCount: 1, results: [{ id: unlinked.id }] });
    expect((await t.api('POST', '/templates', { key, body: { name: 'x', subject: 's', text: 't', channelIds: [UNKNOWN] } })).body.code).toBe('channel_not_found');
    const stranger = await newAccount(t);
    expect((await t.api('GET', `/templates/${linked.id}`, { key: stranger.key })).status).toBe(403);
    expect((await t.api('DELETE', `/templates/${linked.id}`, { key: stranger.key })).status).toBe(403);
  });
});
