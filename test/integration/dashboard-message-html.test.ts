/**
 * GET /dashboard/messages/{id}/html (src/http/routes/dashboard-message-html.ts): a message's
 * HTML with its own sandboxing CSP for the dashboard's iframe, read with the session cookie
 * alone (an iframe cannot send X-Postrider-Dashboard), refused without a session, across
 * accounts and from other sites; remote images only with ?images=1.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDaemonWithDns, stopDaemonWithDns, type TestDaemon } from '../support/daemon.js';
import type { TestDns } from '../support/dns-server.js';
import { newAccount } from '../support/domains.js';
import { setupSender } from '../support/sending.js';
import { signedBody } from '../support/signing.js';

const DASH = { 'x-postrider-dashboard': '1' };
const HTML = '<html><body><p style="color: red">Hello <b>there</b></p><img src="https://images.mail-pics.net/a.png" alt=""></body></html>';
const BASE_CSP = "sandbox; default-src 'none'; style-src 'unsafe-inline'; img-src data: cid:";

let dns: TestDns;
let t: TestDaemon;
let messageId: string;
let textOnlyId: string;

async function login(apiKey: string): Promise<string> {
  const r = await t.api('POST', '/dashboard/session', { key: null, headers: DASH, body: { apiKey } });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return r.headers.get('set-cookie')!.split(';')[0];
}

/** The route as an iframe asks for it: the cookie, no dashboard header, no key. */
function frame(path: string, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(`${t.url}${path}`, { headers });
}

async function send(channelId: string, domain: string, body: Record<string, unknown>): Promise<string> {
  const r = await t.api('POST', '/send/transactional', {
    headers: { 'x-service-channel-id': channelId },
    body: { from: { email: `app@${domain}` }, to: [{ email: 'reader@inbox-demo.net' }], subject: 'html', ...body },
  });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  await signedBody(t.daemon.store, r.body.messageId);
  return r.body.messageId;
}

beforeAll(async () => {
  ({ t, dns } = await startDaemonWithDns({ 'api.authFailureLimit': 3 }));
  const s = await setupSender(t, dns, { deliveryType: 'sandbox', verify: false });
  messageId = await send(s.channelId, s.domain, { html: HTML });
  textOnlyId = await send(s.channelId, s.domain, { text: 'plain only' });
});

afterAll(() => stopDaemonWithDns({ t, dns }));

describe('GET /dashboard/messages/{id}/html', () => {
  it('answers the stored HTML with its own sandboxing policy and no caching, remote images off', async () => {
    const cookie = await login(t.apiKey);
    const res = await frame(`/dashboard/messages/${messageId}/html`, { cookie, 'sec-fetch-site': 'same-origin' });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(res.headers.get('content-security-policy')).toBe(`${BASE_CSP}; frame-ancestors 'self'`);
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    expect(res.headers.get('referrer-policy')).toBe('no-referrer');
    expect(res.headers.get('cache-control')).toBe('no-store');
    // Not the dashboard's DENY: the dashboard's own page frames it (frame-ancestors 'self').
    expect(res.headers.get('x-frame-options')).toBeNull();
    expect(await res.text()).toBe(HTML);
  });

  it('allows remote images with ?images=1 only', async () => {
    const cookie = await login(t.apiKey);
    const on = await frame(`/dashboard/messages/${messageId}/html?images=1`, { cookie });
    expect(on.status).toBe(200);
    expect(on.headers.get('content-security-policy')).toBe(`${BASE_CSP} https: http:; frame-ancestors 'self'`);
    const off = await frame(`/dashboard/messages/${messageId}/html?images=0`, { cookie });
    expect(off.headers.get('content-security-policy')).toBe(`${BASE_CSP}; frame-ancestors 'self'`);
    const bad = await frame(`/dashboard/messages/${messageId}/html?images=yes`, { cookie });
    expect(bad.status).toBe(422);
  });

  it('refuses a request without a session (401) and an ended session (401)', async () => {
    const none = await frame(`/dashboard/messages/${messageId}/html`);
    expect(none.status).toBe(401);
    expect(none.headers.get('content-type')).toContain('application/problem+json');
    const cookie = await login(t.apiKey);
    const out = await t.api('DELETE', '/dashboard/session', { key: null, headers: { cookie, ...DASH } });
    expect(out.status).toBe(204);
    expect((await frame(`/dashboard/messages/${messageId}/html`, { cookie })).status).toBe(401);
  });

  it("refuses another account's session and key (403), as GET /activity/messages/{id} does", async () => {
    const { key } = await newAccount(t);
    const cookie = await login(key);
    const viaCookie = await frame(`/dashboard/messages/${messageId}/html`, { cookie });
    expect(viaCookie.status).toBe(403);
    expect(await viaCookie.text()).not.toContain('Hello');
    expect((await frame(`/dashboard/messages/${messageId}/html`, { authorization: `Bearer ${key}` })).status).toBe(403);
    expect((await t.api('GET', `/activity/messages/${messageId}`, { key })).status).toBe(403);
    // The owner's key reads it like the API.
    expect((await frame(`/dashboard/messages/${messageId}/html`, { authorization: `Bearer ${t.apiKey}` })).status).toBe(200);
  });

  it('counts refused keys against api.authFailureLimit like the API routes', async () => {
    const path = `/dashboard/messages/${messageId}/html`;
    const statuses: number[] = [];
    for (let i = 0; i < 4; i++) statuses.push((await frame(path, { authorization: 'Bearer not-a-key' })).status);
    expect(statuses).toEqual([401, 401, 401, 429]);
  });

  it('refuses a request the browser marks as cross-site, and answers 404 for unknown ids and text-only mail, 422 for a malformed id', async () => {
    const cookie = await login(t.apiKey);
    expect((await frame(`/dashboard/messages/${messageId}/html`, { cookie, 'sec-fetch-site': 'cross-site' })).status).toBe(403);
    expect((await frame(`/dashboard/messages/${textOnlyId}/html`, { cookie })).status).toBe(404);
    expect((await frame('/dashboard/messages/00000000-0000-4000-8000-000000000000/html', { cookie })).status).toBe(404);
    // A malformed id is the API's 422 (every {id} of a path is a UUID).
    expect((await frame('/dashboard/messages/nope/html', { cookie })).status).toBe(422);
  });
});
