/**
 * What real HTTP clients do that must work (issue 18): headers, methods and bodies that
 * libraries send by default, answered like the plain requests they stand for.
 */
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDaemon, type TestDaemon } from '../support/daemon.js';

let t: TestDaemon;

beforeAll(async () => {
  t = await startDaemon();
});

afterAll(async () => {
  await t?.stop();
});

async function createChannel(name: string): Promise<string> {
  const res = await t.api('POST', '/channels', { body: { name } });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.id;
}

const JSON_CT = { 'content-type': 'application/json' };

/** A request outside the API document (trailing slash, over-long URL): plain fetch, no document check. */
async function raw(method: string, urlPath: string, key: string | null = t.apiKey): Promise<{ status: number; headers: Headers; body: any }> {
  const res = await fetch(t.url + urlPath, { method, headers: key ? { authorization: `Bearer ${key}` } : {} });
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: text ? JSON.parse(text) : null };
}

describe('Content-Type: application/json with an empty body', () => {
  it('deletes a channel as if the header were absent', async () => {
    const id = await createChannel('empty-delete');
    const res = await t.api('DELETE', `/channels/${id}`, { headers: JSON_CT, rawBody: '' });
    expect(res.status, JSON.stringify(res.body)).toBe(204);
    expect(res.headers.get('connection')).not.toBe('close');
  });

  it('serves the bodiless POSTs (verify, rotate-key, regenerate-signing-key, cancel) as if the header were absent', async () => {
    const paths = ['/domains/00000000-0000-4000-8000-000000000000/verify', '/domains/00000000-0000-4000-8000-000000000000/rotate-key',
      '/webhooks/00000000-0000-4000-8000-000000000000/regenerate-signing-key', '/broadcasts/00000000-0000-4000-8000-000000000000/cancel'];
    for (const p of paths) {
      const plain = await t.api('POST', p);
      const res = await t.api('POST', p, { headers: JSON_CT, rawBody: '' });
      expect(res.status, `${p} ${JSON.stringify(res.body)}`).toBe(plain.status);
      expect(res.body.code, p).toBe(plain.body.code);
      expect(res.body.code, p).not.toBe('invalid_json');
    }
  });
});

describe('an empty body under another Content-Type (curl -d \'\' sends a form type, .NET\'s StringContent("") text/plain)', () => {
  const types = ['application/x-www-form-urlencoded', 'text/plain; charset=utf-8', 'application/octet-stream'];

  it('deletes a channel as if the header were absent: no content has no media type to refuse', async () => {
    for (const type of types) {
      const id = await createChannel(`empty-${type}`);
      const res = await t.api('DELETE', `/channels/${id}`, { headers: { 'content-type': type }, rawBody: '' });
      expect(res.status, `${type} ${JSON.stringify(res.body)}`).toBe(204);
    }
  });

  it('serves the bodiless POSTs as if the header were absent, and still refuses a body that is not JSON', async () => {
    const p = '/broadcasts/00000000-0000-4000-8000-000000000000/cancel';
    const plain = await t.api('POST', p);
    for (const type of types) {
      const res = await t.api('POST', p, { headers: { 'content-type': type }, rawBody: '' });
      expect(res.status, `${type} ${JSON.stringify(res.body)}`).toBe(plain.status);
      expect(res.body.code, type).toBe(plain.body.code);
    }
    const text = await t.api('POST', p, { headers: { 'content-type': 'text/plain' }, rawBody: 'x' });
    expect(text.status).toBe(415);
    expect(text.body.code).toBe('unsupported_media_type');
  });
});

describe('requests as libraries send them', () => {
  it('accepts Content-Type: application/json; charset=utf-8', async () => {
    const res = await t.api('POST', '/channels', { headers: { 'content-type': 'application/json; charset=utf-8' }, body: { name: 'charset' } });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
  });

  it('reads a JSON body that starts with a UTF-8 byte order mark (files saved by Windows editors, PowerShell) like one without', async () => {
    const res = await t.api('POST', '/channels', { rawBody: '\uFEFF{"name": "bom"}' });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.name).toBe('bom');
    // Only at the start: anywhere else it is not JSON white space.
    const inside = await t.api('POST', '/channels', { rawBody: '{\uFEFF"name": "bom"}' });
    expect(inside.status).toBe(400);
    expect(inside.body.code).toBe('invalid_json');
  });

  it('refuses a compressed body with 415 naming Content-Encoding, not a JSON error about its bytes', async () => {
    const res = await fetch(`${t.url}/channels`, {
      method: 'POST',
      headers: { authorization: `Bearer ${t.apiKey}`, 'content-type': 'application/json', 'content-encoding': 'gzip' },
      body: gzipSync(JSON.stringify({ name: 'gzipped' })),
    });
    const body = (await res.json()) as { code: string; detail: string };
    expect(res.status, JSON.stringify(body)).toBe(415);
    expect(body.code).toBe('unsupported_media_type');
    expect(body.detail).toContain('Content-Encoding');
    expect(res.headers.get('accept-encoding')).toBe('identity');
    const unknown = await fetch(`${t.url}/no-such-thing`, {
      method: 'POST',
      headers: { authorization: `Bearer ${t.apiKey}`, 'content-type': 'application/json', 'content-encoding': 'gzip' },
      body: gzipSync('{}'),
    });
    expect(unknown.status).toBe(404);
    // identity is no coding at all; a charset put there by mistake is ignored as before.
    for (const coding of ['identity', 'utf-8']) {
      const plain = await t.api('POST', '/channels', { headers: { 'content-encoding': coding }, body: { name: coding } });
      expect(plain.status, coding).toBe(200);
    }
  });

  it('answers HEAD on every GET route like the GET, without a body', async () => {
    const id = await createChannel('head');
    for (const p of ['/channels', `/channels/${id}`, '/domains', '/webhooks', '/suppressions', '/broadcasts', '/activity/messages', '/activity/events', '/health']) {
      const get = await t.api('GET', p);
      const head = await t.api('HEAD', p);
      expect(head.status, p).toBe(get.status);
      expect(head.body, p).toBeNull();
    }
  });

  it('serves a path with a trailing slash like the path without it', async () => {
    const id = await createChannel('slash');
    expect((await raw('GET', '/channels/')).status).toBe(200);
    expect((await raw('GET', `/channels/${id}/`)).body.id).toBe(id);
  });

  it('serves a path with doubled slashes (a base URL ending in "/" joined with "/channels") like the plain path', async () => {
    const id = await createChannel('double-slash');
    expect((await raw('GET', '//channels')).status).toBe(200);
    expect((await raw('GET', `//channels//${id}/`)).body.id).toBe(id);
    const created = await fetch(`${t.url}//channels`, {
      method: 'POST',
      headers: { authorization: `Bearer ${t.apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'joined' }),
    });
    expect(created.status).toBe(200);
    expect(((await created.json()) as { name: string }).name).toBe('joined');
    const put = await raw('PUT', `//channels/${id}`);
    expect(put.status).toBe(405);
    expect(put.headers.get('allow')!.split(/,\s*/).sort()).toEqual(['DELETE', 'GET', 'HEAD', 'PATCH']);
  });

  it('answers an unknown method on a known path with a 405 problem and Allow', async () => {
    const id = await createChannel('method');
    const res = await t.api('PUT', `/channels/${id}`, { body: { name: 'x' } });
    expect(res.status, JSON.stringify(res.body)).toBe(405);
    expect(res.body.code).toBe('method_not_allowed');
    expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(res.headers.get('allow')!.split(/,\s*/).sort()).toEqual(['DELETE', 'GET', 'HEAD', 'PATCH']);
    const list = await t.api('DELETE', '/channels');
    expect(list.status).toBe(405);
    expect(list.headers.get('allow')!.split(/,\s*/).sort()).toEqual(['GET', 'HEAD', 'POST']);
    expect((await t.api('PUT', '/no-such-thing')).status).toBe(404);
  });

  it('ignores unknown query parameters such as cache-busters', async () => {
    for (const p of ['/channels?_=123', '/domains?_=123', '/activity/messages?_=1&cb=x', '/statistics/totals?_=123']) {
      const res = await t.api('GET', p);
      expect(res.status, `${p} ${JSON.stringify(res.body)}`).toBe(200);
    }
    // Known parameters are still checked.
    expect((await t.api('GET', '/channels?limit=0&_=1')).status).toBe(422);
  });

  it('answers a URL longer than 16 KB with a 414 problem, after authentication', async () => {
    const long = '/channels?name=' + 'a'.repeat(17_000);
    expect((await raw('GET', long, null)).status).toBe(401);
    const res = await raw('GET', long);
    expect(res.status, JSON.stringify(res.body)).toBe(414);
    expect(res.body.code).toBe('uri_too_long');
    expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  });
});

describe('a malformed id', () => {
  it('is 422 on /id in a path, not 404', async () => {
    const cases: Array<[string, string]> = [
      ['GET', '/channels/abc'], ['PATCH', '/channels/abc'], ['DELETE', '/channels/abc'], ['GET', '/domains/abc'], ['POST', '/domains/abc/verify'],
      ['GET', '/webhooks/abc'], ['GET', '/broadcasts/abc'], ['GET', '/broadcasts/abc/failures'], ['GET', '/activity/messages/abc'],
    ];
    for (const [method, p] of cases) {
      const res = await t.api(method, p, method === 'PATCH' ? { body: {} } : {});
      expect(res.status, `${method} ${p} ${JSON.stringify(res.body)}`).toBe(422);
      expect(Object.keys(res.body.errors), p).toEqual(['/id']);
      expect(res.body.errors['/id'][0].code).toBe('invalid_format');
    }
    // A well-formed unknown id is still 404.
    expect((await t.api('GET', '/channels/00000000-0000-4000-8000-000000000000')).status).toBe(404);
  });

  it('is 422 on the header in X-Service-Channel-Id and X-Helo-Channel-Id', async () => {
    const body = { from: { email: 'a@example.com' }, to: [{ email: 'b@example.net' }], subject: 's', text: 't' };
    for (const name of ['X-Service-Channel-Id', 'X-Helo-Channel-Id']) {
      const res = await t.api('POST', '/send/transactional', { headers: { [name]: 'abc' }, body });
      expect(res.status, JSON.stringify(res.body)).toBe(422);
      expect(res.body.errors[`/${name}`][0].code).toBe('invalid_format');
    }
  });

  it('is 422 on channelId in a body or a query', async () => {
    const hook = await t.api('POST', '/webhooks', { body: { url: 'https://example.com/h', events: ['delivered'], channelId: 'nope' } });
    expect(hook.status).toBe(422);
    expect(Object.keys(hook.body.errors)).toContain('/channelId');
    for (const p of ['/statistics/totals?channelId=nope', '/activity/messages?channelId=nope', '/broadcasts?channelId=nope']) {
      const res = await t.api('GET', p);
      expect(res.status, p).toBe(422);
      expect(Object.keys(res.body.errors), p).toContain('/channelId');
    }
  });
});

describe('every validation error of a request in one answer', () => {
  it('reports a bad address together with too many tags on a send', async () => {
    const channelId = await createChannel('all-errors');
    const body = { from: { email: 'a@example.com' }, to: [{ email: 'not an address' }], subject: 's', text: 't', tags: ['a', 'b', 'c', 'd', 'e', 'f'] };
    const res = await t.api('POST', '/send/transactional', { headers: { 'x-service-channel-id': channelId }, body });
    expect(res.status, JSON.stringify(res.body)).toBe(422);
    // The from domain is linked to no channel: said in the same 422 (issue 30).
    expect(Object.keys(res.body.errors).sort()).toEqual(['/from/email', '/tags', '/to/0/email']);
    expect(res.body.errors['/from/email'][0].code).toBe('domain_not_linked');
  });

  it('reports limit and channelIds together on a list', async () => {
    for (const p of ['/channels', '/domains', '/webhooks']) {
      const res = await t.api('GET', `${p}?limit=0&channelIds=bad`);
      expect(res.status, p).toBe(422);
      expect(Object.keys(res.body.errors).sort(), p).toEqual(['/channelIds/0', '/limit']);
    }
  });

  it('uses snake_case field error codes (an empty broadcast is min_items)', async () => {
    const channelId = await createChannel('snake');
    const res = await t.api('POST', '/send/broadcast', {
      headers: { 'x-service-channel-id': channelId },
      body: { from: { email: 'a@example.com' }, template: { subject: 's', text: 't' }, messages: [] },
    });
    expect(res.status).toBe(422);
    for (const list of Object.values(res.body.errors) as Array<Array<{ code: string }>>) for (const e of list) expect(e.code).toMatch(/^[a-z]+(_[a-z]+)*$/);
    expect(res.body.errors['/messages'].map((e: { code: string }) => e.code)).toContain('min_items');
  });
});

describe('JSON edge cases', () => {
  it('refuses a duplicate key with 422 naming it, at any depth', async () => {
    const res = await t.api('POST', '/channels', { rawBody: '{"name": "first", "name": "second"}' });
    expect(res.status, JSON.stringify(res.body)).toBe(422);
    expect(res.body.errors['/name'][0].code).toBe('duplicate');
    const nested = await t.api('POST', '/channels', { rawBody: '{"name": "n", "tracking": {"links": true, "li\\u006eks": false}}' });
    expect(nested.status).toBe(422);
    expect(Object.keys(nested.body.errors)).toEqual(['/tracking/links']);
  });

  it('refuses a blank channel name', async () => {
    for (const name of [' ', '   ', '\u00a0']) {
      const res = await t.api('POST', '/channels', { body: { name } });
      expect(res.status, JSON.stringify(name)).toBe(422);
      expect(Object.keys(res.body.errors)).toEqual(['/name']);
    }
    const id = await createChannel('named');
    expect((await t.api('PATCH', `/channels/${id}`, { body: { name: '  ' } })).status).toBe(422);
  });

  it('answers a __proto__ key with 422 on that field, not invalid_json', async () => {
    const res = await t.api('POST', '/channels', { rawBody: '{"name": "p", "__proto__": {"admin": true}}' });
    expect(res.status, JSON.stringify(res.body)).toBe(422);
    expect(res.body.errors['/__proto__'][0].code).toBe('reserved');
    const channelId = await createChannel('proto');
    const send = await t.api('POST', '/send/transactional', {
      headers: { 'x-service-channel-id': channelId },
      rawBody: '{"from": {"email": "a@example.com"}, "to": [{"email": "b@example.net"}], "subject": "s", "text": "t", "metadata": {"__proto__": {"x": "1"}}, "template": {"data": {"constructor": {"prototype": {}}}}}',
    });
    expect(send.status, JSON.stringify(send.body)).toBe(422);
    expect(send.body.errors['/metadata/__proto__'][0].code).toBe('reserved');
    expect(send.body.errors['/template/data/constructor/prototype'][0].code).toBe('reserved');
  });
});

describe('header and body errors of a send together', () => {
  it('reports a malformed X-Service-Channel-Id beside the body errors', async () => {
    const body = { from: { email: 'a@example.com' }, to: [{ email: 'not an address' }], subject: 's', text: 't', tags: ['a', 'b', 'c', 'd', 'e', 'f'] };
    const res = await t.api('POST', '/send/transactional', { headers: { 'x-service-channel-id': 'abc' }, body });
    expect(res.status).toBe(422);
    expect(Object.keys(res.body.errors).sort()).toEqual(['/X-Service-Channel-Id', '/tags', '/to/0/email']);
  });
});
