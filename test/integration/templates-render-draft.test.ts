/**
 * POST /templates/render through the daemon's real HTTP port (issue 34, the dashboard's preview
 * of unsaved edits): content that is not stored, rendered in the worker pool as a stored
 * version is (the answer of POST /templates/{id}/render without `version`), with the checks of
 * a create: validation_failed on a missing subject or part, max_size, templating_error with the
 * line and column. Any key of the account; nothing is stored.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDaemon, type ApiResponse, type TestDaemon } from '../support/daemon.js';
import { channelKey, newAccount, newChannel, newDomain } from '../support/domains.js';

let t: TestDaemon;

beforeAll(async () => {
  t = await startDaemon({ 'templates.maxBytes': 2048 });
});
afterAll(() => t.stop());

function fieldError(res: ApiResponse, code: string, pointer: string): Record<string, unknown> {
  expect(res.status, JSON.stringify(res.body)).toBe(422);
  expect(res.body.code).toBe(code);
  return res.body.errors[pointer][0];
}

const draft = (body: Record<string, unknown>, key?: string) => t.api('POST', '/templates/render', { key, body });

describe('POST /templates/render', () => {
  it('renders content that is not stored as POST /templates/{id}/render renders the same version, and stores nothing', async () => {
    const { key } = await newAccount(t);
    const content = { subject: 'Hi {{name}}', html: '<style>p{color:red}</style><p>Hi {{name}}</p>', text: 'Hi {{name}}', inlineStyles: true };
    const data = { name: 'Ann <3' };
    const out = await draft({ ...content, data }, key);
    expect(out.status, JSON.stringify(out.body)).toBe(200);
    expect(out.body).toEqual({ subject: 'Hi Ann <3', html: expect.stringContaining('<p style="color: red;">Hi Ann &lt;3</p>'), text: 'Hi Ann <3' });
    const stored = await t.api('POST', '/templates', { key, body: { name: 'Same', ...content } });
    const version = await t.api('POST', `/templates/${stored.body.id}/render`, { key, body: { data } });
    expect(version.body).toEqual({ version: 1, ...out.body });
    // Data is optional (no data: every variable empty), a part left out is null; nothing was stored by the drafts.
    expect((await draft({ subject: 'Hi {{name}}', text: '[{{name}}]' }, key)).body).toEqual({ subject: 'Hi ', html: null, text: '[]' });
    expect((await t.api('GET', '/templates', { key })).body.totalCount).toBe(1);
  });

  it('takes any key of the account, a channel key too; none is 401', async () => {
    const { key, accountId } = await newAccount(t);
    const ck = await channelKey(t, accountId, await newChannel(t, key));
    expect((await draft({ subject: 's', text: 'x {{a}}', data: { a: 1 } }, ck)).body).toEqual({ subject: 's', html: null, text: 'x 1' });
    const anonymous = await t.api('POST', '/templates/render', { key: null, body: { subject: 's', text: 't' } });
    expect(anonymous.status).toBe(401);
  });

  it('refuses a missing subject, a draft without html or text, and fields of a stored template (validation_failed)', async () => {
    expect(fieldError(await draft({ html: '<p>x</p>' }), 'validation_failed', '/subject').code).toBe('required');
    expect(fieldError(await draft({ subject: 's' }), 'validation_failed', '/html').code).toBe('required');
    expect((await draft({ subject: 's', text: 't', name: 'Welcome' })).status).toBe(422);
    expect(fieldError(await draft({ subject: 's', text: 't', data: [1] }), 'validation_failed', '/data')).toBeDefined();
  });

  it('refuses more than templates.maxBytes of subject, html and text (max_size on the body)', async () => {
    expect(fieldError(await draft({ subject: 's', html: '<p>x</p>', text: 'é'.repeat(1100) }), 'validation_failed', '').code).toBe('max_size');
  });

  it('answers templating_error with the part, line and column, as a create does', async () => {
    const parse = await draft({ subject: 'ok', text: 'line one\nHi {{name' });
    expect(fieldError(parse, 'templating_error', '/text')).toMatchObject({ code: 'templating_error', line: 2, column: 6 });
    const helper = await draft({ subject: 'a {{nope 1}}', text: 't' });
    expect(fieldError(helper, 'templating_error', '/subject')).toMatchObject({ line: 1, column: 3 });
    const block = await draft({ subject: 'ok', html: '<p>\n  {{#if a}}x{{/each}}</p>' });
    expect(fieldError(block, 'templating_error', '/html')).toMatchObject({ line: 2 });
    const stored = await t.api('POST', '/templates', { body: { name: 'x', subject: 'ok', html: '<p>\n  {{#if a}}x{{/each}}</p>' } });
    expect(stored.body.errors['/html'][0]).toEqual(block.body.errors['/html'][0]);
  });

  it('refuses a part nested deeper than 200 at once, as a send does; one such draft held a worker thread for minutes', async () => {
    const nested = (n: number) => `${'{{#if a}}'.repeat(n)}y${'{{/if}}'.repeat(n)}`;
    const subexpressions = (n: number) => `{{lookup ${'(lookup '.repeat(n)}a${')'.repeat(n)} c}}`;
    const deep = await draft({ subject: 'ok', text: `x\n${subexpressions(201)}` });
    expect(fieldError(deep, 'templating_error', '/text')).toMatchObject({ message: expect.stringContaining('nested at most 200 deep'), line: 2, column: 1 });
    const { key } = await newAccount(t);
    const channel = (await t.api('POST', '/channels', { key, body: { name: 'sandbox', deliveryType: 'sandbox' } })).body.id as string;
    await newDomain(t, { name: 'nesting-shop.com', channelIds: [channel] }, key);
    const send = await t.api('POST', '/send/transactional', {
      key,
      headers: { 'X-Service-Channel-Id': channel },
      body: { from: { email: 'shop@nesting-shop.com' }, to: [{ email: 'ann@example.net' }], template: { subject: 'ok', html: nested(300) } },
    });
    expect(fieldError(send, 'templating_error', '/template/html').message).toContain('nested at most 200 deep');
    expect((await draft({ subject: 'ok', text: nested(100), data: { a: 1 } })).body.text).toBe('y');
  });
});
