/**
 * The web dashboard over a real daemon's HTTP port: its files (CSP on every answer, cache
 * headers, SPA fallback, no inline script or style in the built page) and its sessions (login
 * with an account key only, the cookie accepted on the API only with X-Postrider-Dashboard,
 * tenant isolation, expiry, revoked keys, logout, the auth-failure limit).
 */
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { SESSION_ABSOLUTE_MS, SESSION_IDLE_MS } from '../../src/sessions/service.js';
import { startDaemon, type TestDaemon } from '../support/daemon.js';
import { channelKey, newAccount } from '../support/domains.js';
import { waitFor } from '../support/wait.js';

const CSP =
  "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; frame-src 'self'; " +
  "object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";
const DASH = { 'x-postrider-dashboard': '1' };

let t: TestDaemon;

beforeAll(async () => {
  t = await startDaemon({ 'api.authFailureLimit': 5 });
});

afterAll(async () => {
  await t?.stop();
});

afterEach(() => {
  vi.restoreAllMocks();
});

/** Logs in with `apiKey`; the cookie pair "postrider_session=..." of the answer. */
async function login(apiKey: string): Promise<string> {
  const r = await t.api('POST', '/dashboard/session', { key: null, headers: DASH, body: { apiKey } });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  const setCookie = r.headers.get('set-cookie')!;
  expect(setCookie).toMatch(/^postrider_session=[A-Za-z0-9_-]{43}; Path=\/; Max-Age=43200; HttpOnly; SameSite=Strict$/);
  return setCookie.split(';')[0];
}

/** An API call with the session cookie (and the dashboard header unless told not to). */
function withCookie(cookie: string, method: string, path: string, o: { header?: boolean; body?: unknown } = {}) {
  return t.api(method, path, { key: null, body: o.body, headers: { cookie, ...(o.header === false ? {} : DASH) } });
}

async function secondAccount(): Promise<{ accountId: string; key: string; channelId: string }> {
  const { accountId, key } = await newAccount(t);
  const ch = await t.api('POST', '/channels', { key, body: { name: 'B private', deliveryType: 'sandbox' } });
  expect(ch.status).toBe(200);
  return { accountId, key, channelId: ch.body.id };
}

describe('dashboard files', () => {
  it('leads the root of the daemon to the dashboard', async () => {
    for (const method of ['GET', 'HEAD']) {
      const res = await fetch(`${t.url}/`, { method, redirect: 'manual' });
      expect(res.status, method).toBe(302);
      expect(res.headers.get('location')).toBe('/dashboard');
    }
  });

  it('serves the app under /dashboard with the CSP and security headers on every answer', async () => {
    const paths = ['/dashboard', '/dashboard/', '/dashboard/channels', '/dashboard/activity/messages/123', '/dashboard/session', '/dashboard/assets/nope.js'];
    for (const p of paths) {
      const res = await fetch(t.url + p);
      expect(res.headers.get('content-security-policy'), p).toBe(CSP);
      expect(res.headers.get('x-content-type-options'), p).toBe('nosniff');
      expect(res.headers.get('referrer-policy'), p).toBe('no-referrer');
    }
    const page = await fetch(`${t.url}/dashboard/domains/some-id`);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(page.headers.get('cache-control')).toBe('no-cache');
    expect(await page.text()).toContain('<div id="app"></div>');
    expect((await fetch(`${t.url}/dashboard/assets/nope.js`)).status).toBe(404);
    expect((await fetch(`${t.url}/dashboard/favicon.png`)).status).toBe(404);
    // A page path ending in a domain name is a page, not a missing file.
    const domainPage = await fetch(`${t.url}/dashboard/queue/slow-harbor.net`);
    expect(domainPage.status).toBe(200);
    expect(domainPage.headers.get('content-type')).toMatch(/^text\/html/);
  });

  it('sends the CSP and security headers on a dashboard path written with percent-escapes too', async () => {
    // The router decodes %64 to "d": these are the dashboard's page and session routes.
    for (const path of ['/%64ashboard', '/%64ashboard/api-keys', '/dashboar%64/session']) {
      const res = await fetch(`${t.url}${path}`);
      expect(res.status, path).toBe(200);
      expect(res.headers.get('content-security-policy'), path).toBe(CSP);
      expect(res.headers.get('x-frame-options'), path).toBe('DENY');
      expect(res.headers.get('x-content-type-options'), path).toBe('nosniff');
    }
  });

  it('serves hashed assets as immutable, and the built page holds no inline script or style', async () => {
    const html = await (await fetch(`${t.url}/dashboard/`)).text();
    const assets = [...html.matchAll(/(?:src|href)="(\/dashboard\/assets\/[^"]+)"/g)].map((m) => m[1]);
    expect(assets.some((a) => a.endsWith('.js'))).toBe(true);
    expect(assets.some((a) => a.endsWith('.css'))).toBe(true);
    for (const a of assets) {
      const res = await fetch(t.url + a);
      expect(res.status, a).toBe(200);
      expect(res.headers.get('cache-control'), a).toBe('public, max-age=31536000, immutable');
      expect(res.headers.get('content-security-policy'), a).toBe(CSP);
    }
    // Every <script> has a src, no <style> element, no style="" or on*="" attribute.
    expect([...html.matchAll(/<script\b[^>]*>/g)].every((m) => / src="/.test(m[0]))).toBe(true);
    expect(html).not.toMatch(/<style\b|\sstyle=|\son[a-z]+=/i);
  });

  it('is not in the OpenAPI document (the session operations are)', async () => {
    const doc = (await t.api('GET', '/openapi.json', { key: null })).body;
    expect(Object.keys(doc.paths).filter((p) => p.startsWith('/dashboard'))).toEqual(['/dashboard/session']);
  });
});

describe('dashboard sessions', () => {
  it('logs in with an account key, and the cookie reads the API only with the dashboard header', async () => {
    const cookie = await login(t.apiKey);
    const current = await withCookie(cookie, 'GET', '/dashboard/session');
    expect(current.body.session).toMatchObject({ accountId: t.accountId });
    expect((await withCookie(cookie, 'GET', '/channels')).status).toBe(200);
    const noHeader = await withCookie(cookie, 'GET', '/channels', { header: false });
    expect(noHeader.status).toBe(401);
    expect(noHeader.body).toMatchObject({ code: 'unauthorized', detail: expect.stringContaining('X-Postrider-Dashboard') });
    const writes = await withCookie(cookie, 'POST', '/channels', { body: { name: 'from the dashboard' }, header: false });
    expect(writes.status).toBe(401);
  });

  it('refuses a channel key at login with account_key_required, and an unknown key with unauthorized', async () => {
    const ch = await t.api('POST', '/channels', { body: { name: 'keyed' } });
    const key = await channelKey(t, t.accountId, ch.body.id);
    const r = await t.api('POST', '/dashboard/session', { key: null, headers: DASH, body: { apiKey: key } });
    expect(r.status).toBe(403);
    expect(r.body).toMatchObject({ code: 'account_key_required', title: 'Account-level API key required' });
    expect(r.headers.get('set-cookie')).toBeNull();
    const bad = await t.api('POST', '/dashboard/session', { key: null, headers: DASH, body: { apiKey: 'pr_nope' } });
    expect(bad.status).toBe(401);
    expect(bad.body.code).toBe('unauthorized');
    const noHeader = await t.api('POST', '/dashboard/session', { key: null, body: { apiKey: t.apiKey } });
    expect(noHeader.status).toBe(401);
  });

  it('gives the cookie exactly its account: another account\'s channel is refused', async () => {
    const b = await secondAccount();
    const cookieA = await login(t.apiKey);
    const res = await withCookie(cookieA, 'GET', `/channels/${b.channelId}`);
    expect([403, 404]).toContain(res.status);
    const list = await withCookie(cookieA, 'GET', '/channels');
    expect(list.body.results.map((c: { id: string }) => c.id)).not.toContain(b.channelId);
    const cookieB = await login(b.key);
    expect((await withCookie(cookieB, 'GET', `/channels/${b.channelId}`)).status).toBe(200);
    expect((await withCookie(cookieB, 'GET', '/dashboard/session')).body.session.accountId).toBe(b.accountId);
  });

  it('ends the session with session_expired when its key is revoked', async () => {
    const key = await t.daemon.store.apiKeys.create({ accountId: t.accountId, channelId: null });
    const cookie = await login(key.token);
    expect((await withCookie(cookie, 'GET', '/channels')).status).toBe(200);
    await t.daemon.store.apiKeys.revoke(key.key.id);
    const res = await withCookie(cookie, 'GET', '/channels');
    expect(res.status).toBe(401);
    expect(res.body).toMatchObject({ code: 'session_expired', title: 'Session expired' });
    expect((await withCookie(cookie, 'GET', '/dashboard/session')).body.session).toBeNull();
  });

  it('ends the session after the idle time and after the absolute lifetime', async () => {
    const start = Date.now();
    const idle = await login(t.apiKey);
    vi.spyOn(Date, 'now').mockReturnValue(start + SESSION_IDLE_MS + 1000);
    expect((await withCookie(idle, 'GET', '/channels')).body.code).toBe('session_expired');
    vi.restoreAllMocks();

    const busy = await login(t.apiKey);
    // Used every 50 minutes: never idle, yet over after 12 hours.
    for (let at = start + 50 * 60_000; at < start + SESSION_ABSOLUTE_MS - 50 * 60_000; at += 50 * 60_000) {
      vi.spyOn(Date, 'now').mockReturnValue(at);
      const r = await withCookie(busy, 'GET', '/channels');
      expect(r.status, `${(at - start) / 60_000} min: ${JSON.stringify(r.body)}`).toBe(200);
      vi.restoreAllMocks();
      // The last use is written after the answer (not awaited by the request).
      const idleEnd = new Date(at + SESSION_IDLE_MS).toISOString();
      await waitFor(async () => (await withCookie(busy, 'GET', '/dashboard/session')).body.session?.idleExpiresAt === idleEnd, { what: 'the last use written' });
    }
    vi.spyOn(Date, 'now').mockReturnValue(start + SESSION_ABSOLUTE_MS + 1000);
    expect((await withCookie(busy, 'GET', '/channels')).body.code).toBe('session_expired');
  });

  it('answers the account\'s data with Cache-Control: no-store, so no browser cache keeps it after sign-out', async () => {
    const cookie = await login(t.apiKey);
    const created = await t.api('POST', '/api-keys', { body: { name: 'cached?' } });
    expect(created.headers.get('cache-control')).toBe('no-store');
    for (const path of ['/channels', '/api-keys', '/activity/events', '/dashboard/session']) {
      const r = await withCookie(cookie, 'GET', path);
      expect(r.status, path).toBe(200);
      expect(r.headers.get('cache-control'), path).toBe('no-store');
    }
    // Files of the build keep their own caching.
    expect((await fetch(`${t.url}/dashboard`)).headers.get('cache-control')).toBe('no-cache');
  });

  it('logs out: the cookie is cleared and no longer accepted', async () => {
    const cookie = await login(t.apiKey);
    const out = await withCookie(cookie, 'DELETE', '/dashboard/session');
    expect(out.status).toBe(204);
    expect(out.headers.get('set-cookie')).toBe('postrider_session=; Path=/; Max-Age=0; HttpOnly; SameSite=Strict');
    expect((await withCookie(cookie, 'GET', '/channels')).body.code).toBe('session_expired');
  });

  it('removes ended sessions from the store at the next login', async () => {
    const old = await login(t.apiKey);
    const token = old.split('=')[1];
    expect(await t.daemon.store.sessions.findByToken(token)).toBeDefined();
    vi.spyOn(Date, 'now').mockReturnValue(Date.now() + SESSION_IDLE_MS + 1000);
    await login(t.apiKey);
    expect(await t.daemon.store.sessions.findByToken(token)).toBeUndefined();
  });

  it('marks the cookie Secure when publicUrl is https, however the scheme is spelt', async () => {
    for (const publicUrl of ['https://mail.postrider-demo.net', 'HTTPS://mail.postrider-demo.net']) {
      const https = await startDaemon({ publicUrl });
      try {
        const r = await https.api('POST', '/dashboard/session', { key: null, headers: DASH, body: { apiKey: https.apiKey } });
        expect(r.headers.get('set-cookie'), publicUrl).toMatch(/; HttpOnly; SameSite=Strict; Secure$/);
      } finally {
        await https.stop();
      }
    }
  });

  it('counts refused login keys against the auth-failure limit', async () => {
    const codes: number[] = [];
    for (let i = 0; i < 8; i++) codes.push((await t.api('POST', '/dashboard/session', { key: null, headers: DASH, body: { apiKey: `pr_guess${i}` } })).status);
    expect(codes).toContain(429);
    expect(codes.slice(0, 4)).toEqual([401, 401, 401, 401]);
  });
});
