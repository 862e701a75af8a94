/**
 * GET /dashboard/templates/{id|alias}/html (src/http/routes/dashboard-template-html.ts): a stored
 * template version's HTML rendered with sample data, under the sandboxing CSP of a message's
 * HTML, for the template editor's iframe: the render of POST /templates/{id}/render, read with
 * the session cookie alone, refused without a session, across accounts and from other sites.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDaemon, type TestDaemon } from '../support/daemon.js';
import { newAccount } from '../support/domains.js';

const DASH = { 'x-postrider-dashboard': '1' };
const CSP = "sandbox; default-src 'none'; style-src 'unsafe-inline'; img-src data: cid:; frame-ancestors 'self'";
const HTML_V1 = '<p style="color: #b00">Hello {{name}}</p>';

let t: TestDaemon;
let id: string;
let cookie: string;

async function login(apiKey: string): Promise<string> {
  const r = await t.api('POST', '/dashboard/session', { key: null, headers: DASH, body: { apiKey } });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return r.headers.get('set-cookie')!.split(';')[0];
}

/** The route as an iframe asks for it: the cookie, no dashboard header, no key. */
function frame(query: string, headers: Record<string, string> = {}, target = id): Promise<Response> {
  return fetch(`${t.url}/dashboard/templates/${target}/html?${query}`, { headers });
}

const data = (v: unknown) => `data=${encodeURIComponent(JSON.stringify(v))}`;

beforeAll(async () => {
  t = await startDaemon();
  const made = await t.api('POST', '/templates', { body: { name: 'Welcome', alias: 'welcome', subject: 'Hi {{name}}', html: HTML_V1 } });
  expect(made.status, JSON.stringify(made.body)).toBe(200);
  id = made.body.id;
  expect((await t.api('PATCH', `/templates/${id}`, { body: { html: '<p>Bye {{name}}</p>' } })).status).toBe(200);
  cookie = await login(t.apiKey);
});

afterAll(() => t?.stop());

describe('GET /dashboard/templates/{id|alias}/html', () => {
  it('answers the version asked for, rendered with the data as POST /templates/{id}/render does, under its own sandboxing policy', async () => {
    const res = await frame(`version=1&${data({ name: '<Ann>' })}`, { cookie, 'sec-fetch-site': 'same-origin' });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(res.headers.get('content-security-policy')).toBe(CSP);
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    expect(res.headers.get('referrer-policy')).toBe('no-referrer');
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(res.headers.get('x-frame-options')).toBeNull();
    const body = await res.text();
    const api = await t.api('POST', `/templates/${id}/render`, { body: { data: { name: '<Ann>' }, version: 1 } });
    expect(body).toBe(api.body.html);
    expect(body).toContain('Hello &lt;Ann&gt;');
    // By alias, and the other version.
    expect(await (await frame(`version=2&${data({ name: 'Bo' })}`, { cookie }, 'welcome')).text()).toBe('<p>Bye Bo</p>');
  });

  it('allows remote images with ?images=1 only', async () => {
    const on = await frame(`version=1&images=1&${data({})}`, { cookie });
    expect(on.headers.get('content-security-policy')).toBe(CSP.replace('cid:', 'cid: https: http:'));
  });

  it('refuses data that is not a JSON object, longer than 8,000 characters or without a version (422)', async () => {
    for (const q of ['version=1&data=%7Bnope', `version=1&${data([1])}`, `version=1&${data({ a: 'x'.repeat(8_000) })}`, data({})]) {
      const res = await frame(q, { cookie });
      expect(res.status, q.slice(0, 40)).toBe(422);
      expect(res.headers.get('content-type')).toContain('application/problem+json');
    }
    const bad = (await (await frame('version=1&data=%5B%5D', { cookie })).json()) as { errors: Record<string, { code: string }[]> };
    expect(bad.errors['/data'][0].code).toBe('invalid_type');
  });

  it('answers 404 for an unknown template or version, and for a version without HTML', async () => {
    expect((await frame(`version=3&${data({})}`, { cookie })).status).toBe(404);
    expect((await frame(`version=1&${data({})}`, { cookie }, 'no-such-alias')).status).toBe(404);
    const textOnly = await t.api('POST', '/templates', { body: { name: 'Plain', subject: 's', text: 'only text' } });
    expect((await frame(`version=1&${data({})}`, { cookie }, textOnly.body.id)).status).toBe(404);
  });

  it('refuses a request without a session (401), one the browser marks as cross-site (403) and another account (403)', async () => {
    expect((await frame(`version=1&${data({})}`)).status).toBe(401);
    expect((await frame(`version=1&${data({})}`, { cookie, 'sec-fetch-site': 'cross-site' })).status).toBe(403);
    const other = await newAccount(t);
    const viaCookie = await frame(`version=1&${data({ name: 'x' })}`, { cookie: await login(other.key) });
    expect(viaCookie.status).toBe(403);
    expect(await viaCookie.text()).not.toContain('Hello');
    expect((await frame(`version=1&${data({})}`, { authorization: `Bearer ${other.key}` })).status).toBe(403);
    // The owner's key reads it like the API.
    expect((await frame(`version=1&${data({})}`, { authorization: `Bearer ${t.apiKey}` })).status).toBe(200);
  });
});
