/**
 * GET /dashboard/settings (src/http/routes/dashboard-settings.ts): the SMTP settings the
 * dashboard's API keys page shows to copy. Authenticated like the API; the same answer for every
 * account (the daemon's own settings, nothing of an account); the host a client can use, never a
 * wildcard bind address. Read with fetch: the route is hidden from OpenAPI, like the dashboard's.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { smtpClientHost } from '../../src/http/routes/dashboard-settings.js';
import { startDaemon, type TestDaemon } from '../support/daemon.js';
import { channelKey, newAccount, newChannel } from '../support/domains.js';

let t: TestDaemon;

function settings(headers: Record<string, string> = {}): Promise<Response> {
  return fetch(`${t.url}/dashboard/settings`, { headers });
}

beforeAll(async () => {
  t = await startDaemon({ 'smtp.enabled': true, 'smtp.host': '0.0.0.0', 'smtp.port': 0, hostname: 'mta.example.org' });
});

afterAll(async () => {
  await t?.stop();
});

describe('GET /dashboard/settings', () => {
  it('answers the SMTP host clients use (the hostname, not the wildcard bind), the bound port and the TLS', async () => {
    const res = await settings({ authorization: `Bearer ${t.apiKey}` });
    expect(res.status).toBe(200);
    expect(res.headers.get('cache-control')).toBe('no-store');
    const port = (t.daemon as unknown as { smtp: { port: number } }).smtp.port;
    expect(port).toBeGreaterThan(0);
    expect(await res.json()).toEqual({
      smtp: { enabled: true, host: 'mta.example.org', port, implicitTlsPort: 0, localOnly: false, selfSignedCertificate: true },
    });
  });

  it('gives every account, a channel key and a dashboard session the same answer, which holds nothing of an account', async () => {
    const mine = await (await settings({ authorization: `Bearer ${t.apiKey}` })).text();
    const other = await newAccount(t);
    const channelId = await newChannel(t, other.key);
    const theirs = await settings({ authorization: `Bearer ${other.key}` });
    expect(await theirs.text()).toBe(mine);
    const channel = await settings({ authorization: `Bearer ${await channelKey(t, other.accountId, channelId)}` });
    expect(await channel.text()).toBe(mine);
    for (const id of [t.accountId, other.accountId, channelId]) expect(mine).not.toContain(id);
    const login = await t.api('POST', '/dashboard/session', { key: null, headers: { 'x-postrider-dashboard': '1' }, body: { apiKey: t.apiKey } });
    const cookie = login.headers.get('set-cookie')!.split(';')[0];
    const bySession = await settings({ cookie, 'x-postrider-dashboard': '1' });
    expect(bySession.status).toBe(200);
    expect(await bySession.text()).toBe(mine);
  });

  it('answers 401 without a key or session, and with a wrong key', async () => {
    expect((await settings()).status).toBe(401);
    expect((await settings({ authorization: 'Bearer pr_nope' })).status).toBe(401);
  });
});

describe('smtpClientHost', () => {
  it.each([
    [{ bind: '127.0.0.1', hostname: 'mta.example.org', publicUrl: '' }, { host: '127.0.0.1', localOnly: true }],
    [{ bind: '::1', hostname: 'mta.example.org', publicUrl: '' }, { host: '::1', localOnly: true }],
    [{ bind: '0.0.0.0', hostname: 'mta.example.org', publicUrl: 'http://0.0.0.0:8025' }, { host: 'mta.example.org', localOnly: false }],
    [{ bind: '::', hostname: 'vm', publicUrl: 'https://mail.example.net' }, { host: 'mail.example.net', localOnly: false }],
    [{ bind: '0.0.0.0', hostname: 'vm', publicUrl: 'http://127.0.0.1:8025' }, { host: 'vm', localOnly: false }],
    [{ bind: '192.0.2.10', hostname: 'vm', publicUrl: 'http://192.0.2.10:8025' }, { host: '192.0.2.10', localOnly: false }],
    [{ bind: '192.0.2.10', hostname: 'mta.example.org', publicUrl: '' }, { host: 'mta.example.org', localOnly: false }],
  ])('for %j answers %j', (input, expected) => {
    expect(smtpClientHost(input)).toEqual(expected);
  });
});
