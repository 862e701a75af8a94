/**
 * /inbound/routes through the daemon's real HTTP port (issue 33, the routes): create, read, list,
 * update, delete and re-key; every error code a route body can get; tenant isolation; the routes
 * going with their channel and domain; and the domain's inbound MX record, looked up in the test
 * DNS server by verify once the domain has a route.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startDaemonWithDns, stopDaemonWithDns, type ApiResponse, type TestDaemon } from '../support/daemon.js';
import type { TestDns } from '../support/dns-server.js';
import { channelKey, HOSTNAME, newAccount, newChannel, newDomain, newVerifiedDomain, uniqueName } from '../support/domains.js';
import { publish, publishAll } from '../support/sending.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
/** A receiving host with a public address in the test DNS server: URLs on it pass the target check. */
const APP_HOST = 'app.postrider-test.net';
const URL_OK = `https://${APP_HOST}/inbound`;
const MAX_ROUTES = 4;

let t: TestDaemon;
let dns: TestDns;

beforeAll(async () => {
  ({ t, dns } = await startDaemonWithDns({ hostname: HOSTNAME, 'inbound.maxRoutesPerAccount': MAX_ROUTES }));
});
afterAll(() => stopDaemonWithDns({ t, dns }));

beforeEach(() => dns.set(APP_HOST, 'A', ['93.184.216.34']));
afterEach(() => dns.clear());

/** A fresh account with a channel and a domain, and its key. */
async function tenant(): Promise<{ key: string; accountId: string; channelId: string; domainId: string; domain: string }> {
  const { key, accountId } = await newAccount(t);
  const channelId = await newChannel(t, key);
  const d = await newVerifiedDomain(t, dns, { name: uniqueName('in'), channelIds: [channelId] }, key);
  return { key, accountId, channelId, domainId: d.id, domain: d.name };
}

async function createRoute(key: string, body: Record<string, unknown>): Promise<any> {
  const res = await t.api('POST', '/inbound/routes', { key, body: { url: URL_OK, ...body } });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body;
}

function fieldCodes(res: ApiResponse, pointer: string): string[] {
  expect(res.status, JSON.stringify(res.body)).toBe(422);
  expect(res.body.code).toBe('validation_failed');
  return (res.body.errors[pointer] ?? []).map((e: { code: string }) => e.code);
}

describe('inbound routes', () => {
  it('creates a route and answers it with its payloadSigningKey in create, retrieve and list', async () => {
    const a = await tenant();
    const created = await createRoute(a.key, { channelId: a.channelId, address: `Support@${a.domain.toUpperCase()}`, additionalHeaders: [{ name: 'X-Token', value: 't0k' }] });
    expect(created).toEqual({
      id: expect.stringMatching(UUID),
      channelId: a.channelId,
      domainId: a.domainId,
      address: `support@${a.domain}`,
      url: URL_OK,
      payloadSigningKey: expect.stringMatching(/^whsec_[A-Za-z0-9_-]{43}$/),
      enabled: true,
      additionalHeaders: [{ name: 'X-Token', value: 't0k' }],
      createdAt: expect.any(String),
      updatedAt: created.createdAt,
    });
    expect((await t.api('GET', `/inbound/routes/${created.id}`, { key: a.key })).body).toEqual(created);
    expect((await t.api('GET', '/inbound/routes', { key: a.key })).body).toEqual({ totalCount: 1, results: [created] });
  });

  it('takes a catch-all, disabled, and pages the list with limit, offset and channelIds', async () => {
    const a = await tenant();
    const other = await newChannel(t, a.key);
    const all = await createRoute(a.key, { channelId: a.channelId, address: `*@${a.domain}`, enabled: false });
    expect(all).toMatchObject({ address: `*@${a.domain}`, enabled: false });
    const second = await createRoute(a.key, { channelId: other, address: `sales@${a.domain}` });
    const third = await createRoute(a.key, { channelId: a.channelId, address: `help@${a.domain}` });
    const page = await t.api('GET', '/inbound/routes?limit=2&offset=1', { key: a.key });
    expect([page.body.totalCount, page.body.results.map((r: any) => r.id)]).toEqual([3, [second.id, third.id]]);
    const ofOther = await t.api('GET', `/inbound/routes?channelIds=${other}`, { key: a.key });
    expect([ofOther.body.totalCount, ofOther.body.results.map((r: any) => r.id)]).toEqual([1, [second.id]]);
    expect(fieldCodes(await t.api('GET', '/inbound/routes?channelIds=nope', { key: a.key }), '/channelIds/0')).toEqual(['invalid_format']);
    expect(fieldCodes(await t.api('GET', '/inbound/routes?limit=0', { key: a.key }), '/limit')).toEqual(['min_value']);
  });

  it('updates with PATCH, replaces the key, keeps the address, and removes the route with DELETE', async () => {
    const a = await tenant();
    const route = await createRoute(a.key, { channelId: a.channelId, address: `support@${a.domain}` });
    const other = await newChannel(t, a.key);
    const patched = await t.api('PATCH', `/inbound/routes/${route.id}`, { key: a.key, body: { enabled: false, channelId: other, url: `https://${APP_HOST}/v2` } });
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({ enabled: false, channelId: other, url: `https://${APP_HOST}/v2`, address: route.address, payloadSigningKey: route.payloadSigningKey });
    expect(fieldCodes(await t.api('PATCH', `/inbound/routes/${route.id}`, { key: a.key, body: { address: `x@${a.domain}` } }), '/address')).toEqual(['unknown_field']);
    const rekeyed = await t.api('POST', `/inbound/routes/${route.id}/regenerate-signing-key`, { key: a.key });
    expect(rekeyed.status).toBe(200);
    expect(rekeyed.body.payloadSigningKey).toMatch(/^whsec_/);
    expect(rekeyed.body.payloadSigningKey).not.toBe(route.payloadSigningKey);
    expect((await t.api('GET', `/inbound/routes/${route.id}`, { key: a.key })).body.payloadSigningKey).toBe(rekeyed.body.payloadSigningKey);
    expect((await t.api('DELETE', `/inbound/routes/${route.id}`, { key: a.key })).status).toBe(204);
    const gone = await t.api('GET', `/inbound/routes/${route.id}`, { key: a.key });
    expect([gone.status, gone.body.code]).toEqual([404, 'not_found']);
    expect((await t.api('DELETE', `/inbound/routes/${route.id}`, { key: a.key })).status).toBe(404);
  });

  it('removes the routes of a deleted channel and of a deleted domain', async () => {
    const a = await tenant();
    const onChannel = await createRoute(a.key, { channelId: a.channelId, address: `support@${a.domain}` });
    const b = await tenant();
    const onDomain = await createRoute(b.key, { channelId: b.channelId, address: `*@${b.domain}` });
    expect((await t.api('DELETE', `/channels/${a.channelId}`, { key: a.key })).status).toBe(204);
    expect((await t.api('GET', `/inbound/routes/${onChannel.id}`, { key: a.key })).status).toBe(404);
    expect((await t.api('DELETE', `/domains/${b.domainId}`, { key: b.key })).status).toBe(204);
    expect((await t.api('GET', `/inbound/routes/${onDomain.id}`, { key: b.key })).status).toBe(404);
  });
});

describe('inbound route errors', () => {
  it('requires channelId, address and url (validation_failed, required)', async () => {
    const res = await t.api('POST', '/inbound/routes', { body: {} });
    for (const field of ['/channelId', '/address', '/url']) expect(fieldCodes(res, field)).toEqual(['required']);
  });

  it('refuses an address that is no plain address or catch-all (invalid_format)', async () => {
    const a = await tenant();
    for (const address of ['no-at-sign', `"quoted"@${a.domain}`, 'someone@bad_domain', `a%b@${a.domain}`, '*@nodot']) {
      const res = await t.api('POST', '/inbound/routes', { key: a.key, body: { channelId: a.channelId, address, url: URL_OK } });
      expect(fieldCodes(res, '/address'), address).toEqual(['invalid_format']);
    }
  });

  it("refuses an address on a domain that is not the account's (unknown_domain), even one another account has", async () => {
    const a = await tenant();
    const b = await tenant();
    for (const address of [`support@${uniqueName('nowhere')}`, `support@${b.domain}`]) {
      const res = await t.api('POST', '/inbound/routes', { key: a.key, body: { channelId: a.channelId, address, url: URL_OK } });
      expect(fieldCodes(res, '/address')).toEqual(['unknown_domain']);
    }
  });

  it('refuses an address on a domain of the account that is not verified yet (domain_unverified), and accepts it once verified', async () => {
    const a = await tenant();
    const d = await newDomain(t, { name: uniqueName('squat'), channelIds: [a.channelId] }, a.key);
    const body = { channelId: a.channelId, address: `*@${d.name}`, url: URL_OK };
    const res = await t.api('POST', '/inbound/routes', { key: a.key, body });
    expect(fieldCodes(res, '/address')).toEqual(['domain_unverified']);
    expect(res.body.errors['/address'][0].message).toContain(`/domains/${d.id}/verify`);
    publishAll(dns, d.dnsRecords);
    expect((await t.api('POST', `/domains/${d.id}/verify`, { key: a.key })).body.verified).toBe(true);
    await createRoute(a.key, body);
  });

  it('refuses an address routed already, in the account or by another account with the same domain name (duplicate)', async () => {
    const a = await tenant();
    await createRoute(a.key, { channelId: a.channelId, address: `support@${a.domain}` });
    const again = await t.api('POST', '/inbound/routes', { key: a.key, body: { channelId: a.channelId, address: `SUPPORT@${a.domain}`, url: URL_OK } });
    expect(fieldCodes(again, '/address')).toEqual(['duplicate']);
    const rival = await newAccount(t);
    const rivalChannel = await newChannel(t, rival.key);
    // Both verified (the DNS owner published both accounts' records): the first route holds the address.
    await newVerifiedDomain(t, dns, { name: a.domain, channelIds: [rivalChannel] }, rival.key);
    const theirs = await t.api('POST', '/inbound/routes', { key: rival.key, body: { channelId: rivalChannel, address: `support@${a.domain}`, url: URL_OK } });
    expect(fieldCodes(theirs, '/address')).toEqual(['duplicate']);
  });

  it('checks the URL as webhook URLs are checked (insecure_url, forbidden_address, unresolvable_host), with every field error in one answer', async () => {
    const a = await tenant();
    const body = (url: string) => ({ key: a.key, body: { channelId: a.channelId, address: `x@${a.domain}`, url } });
    expect(fieldCodes(await t.api('POST', '/inbound/routes', body(`http://${APP_HOST}/in`)), '/url')).toEqual(['insecure_url']);
    expect(fieldCodes(await t.api('POST', '/inbound/routes', body('https://127.0.0.1/in')), '/url')).toEqual(['forbidden_address']);
    expect(fieldCodes(await t.api('POST', '/inbound/routes', body('https://nothing-here.postrider-test.net/in')), '/url')).toEqual(['unresolvable_host']);
    const both = await t.api('POST', '/inbound/routes', { key: a.key, body: { channelId: a.channelId, address: 'x@nowhere-at-all.com', url: 'https://127.0.0.1/in' } });
    expect([fieldCodes(both, '/address'), fieldCodes(both, '/url')]).toEqual([['unknown_domain'], ['forbidden_address']]);
  });

  it('checks additionalHeaders as webhook headers are checked (reserved_header, duplicate_items, invalid_format)', async () => {
    const a = await tenant();
    const withHeaders = (additionalHeaders: unknown) => t.api('POST', '/inbound/routes', { key: a.key, body: { channelId: a.channelId, address: `x@${a.domain}`, url: URL_OK, additionalHeaders } });
    expect(fieldCodes(await withHeaders([{ name: 'X-Service-Webhook-Signature', value: 'forged' }]), '/additionalHeaders/0/name')).toEqual(['reserved_header']);
    expect(fieldCodes(await withHeaders([{ name: 'X-A', value: '1' }, { name: 'x-a', value: '2' }]), '/additionalHeaders/1/name')).toEqual(['duplicate_items']);
    expect(fieldCodes(await withHeaders([{ name: 'X-A', value: 'a\r\nInjected: yes' }]), '/additionalHeaders/0/value')).toEqual(['invalid_format']);
  });

  it('refuses a route past the per-account limit (resource_limit_exceeded)', async () => {
    const a = await tenant();
    for (let i = 0; i < MAX_ROUTES; i++) await createRoute(a.key, { channelId: a.channelId, address: `r${i}@${a.domain}` });
    const res = await t.api('POST', '/inbound/routes', { key: a.key, body: { channelId: a.channelId, address: `more@${a.domain}`, url: URL_OK } });
    expect([res.status, res.body.code]).toEqual([403, 'resource_limit_exceeded']);
  });

  it('answers channel_not_found for an unknown channel and forbidden for another account\'s', async () => {
    const a = await tenant();
    const b = await tenant();
    const unknown = await t.api('POST', '/inbound/routes', { key: a.key, body: { channelId: randomUUID(), address: `x@${a.domain}`, url: URL_OK } });
    expect([unknown.status, unknown.body.code]).toEqual([404, 'channel_not_found']);
    const foreign = await t.api('POST', '/inbound/routes', { key: a.key, body: { channelId: b.channelId, address: `x@${a.domain}`, url: URL_OK } });
    expect([foreign.status, foreign.body.code]).toEqual([403, 'forbidden']);
    const mine = await createRoute(a.key, { channelId: a.channelId, address: `x@${a.domain}` });
    const moved = await t.api('PATCH', `/inbound/routes/${mine.id}`, { key: a.key, body: { channelId: b.channelId } });
    expect([moved.status, moved.body.code]).toEqual([403, 'forbidden']);
  });

  it('answers not_found for an unknown id and 422 invalid_format for a malformed one', async () => {
    const unknown = await t.api('GET', `/inbound/routes/${randomUUID()}`);
    expect([unknown.status, unknown.body.code]).toEqual([404, 'not_found']);
    expect(fieldCodes(await t.api('GET', '/inbound/routes/not-a-uuid'), '/id')).toEqual(['invalid_format']);
  });
});

describe('inbound route tenant isolation', () => {
  it("answers 403 forbidden for another account's route in every operation, and never lists it", async () => {
    const a = await tenant();
    const b = await tenant();
    const theirs = await createRoute(b.key, { channelId: b.channelId, address: `support@${b.domain}` });
    for (const [method, path] of [['GET', ''], ['PATCH', ''], ['DELETE', ''], ['POST', '/regenerate-signing-key']] as const) {
      const res = await t.api(method, `/inbound/routes/${theirs.id}${path}`, { key: a.key, ...(method === 'PATCH' ? { body: { enabled: false } } : {}) });
      expect([res.status, res.body.code], `${method} ${path}`).toEqual([403, 'forbidden']);
    }
    expect((await t.api('GET', '/inbound/routes', { key: a.key })).body.totalCount).toBe(0);
    expect((await t.api('GET', `/inbound/routes/${theirs.id}`, { key: b.key })).body).toEqual(theirs);
  });

  it("lets a channel key read its channel's routes with header values masked, and write none", async () => {
    const a = await tenant();
    const other = await newChannel(t, a.key);
    const mine = await createRoute(a.key, { channelId: a.channelId, address: `support@${a.domain}`, additionalHeaders: [{ name: 'Authorization', value: 'Bearer s3cret' }] });
    const notMine = await createRoute(a.key, { channelId: other, address: `sales@${a.domain}` });
    const key = await channelKey(t, a.accountId, a.channelId);
    const got = await t.api('GET', `/inbound/routes/${mine.id}`, { key });
    expect([got.status, got.body.additionalHeaders]).toEqual([200, [{ name: 'Authorization', value: '********' }]]);
    const list = await t.api('GET', '/inbound/routes', { key });
    expect(list.body.results.map((r: any) => r.id)).toEqual([mine.id]);
    expect((await t.api('GET', `/inbound/routes/${notMine.id}`, { key })).status).toBe(403);
    for (const [method, path, body] of [['PATCH', `/${mine.id}`, { enabled: false }], ['DELETE', `/${mine.id}`, undefined], ['POST', `/${mine.id}/regenerate-signing-key`, undefined], ['POST', '', { channelId: a.channelId, address: `x@${a.domain}`, url: URL_OK }]] as const) {
      const res = await t.api(method, `/inbound/routes${path}`, { key, ...(body ? { body } : {}) });
      expect([res.status, res.body.code], `${method} ${path}`).toEqual([403, 'forbidden']);
    }
  });
});

describe("the domain's inbound MX record", () => {
  async function records(id: string, key: string) {
    return (await t.api('GET', `/domains/${id}`, { key })).body.dnsRecords;
  }

  it('is listed once the domain has a route, as `10 <hostname>` at the domain, and goes with its last route', async () => {
    const a = await tenant();
    expect(await records(a.domainId, a.key)).not.toHaveProperty('inbound');
    const route = await createRoute(a.key, { channelId: a.channelId, address: `*@${a.domain}`, enabled: false });
    expect((await records(a.domainId, a.key)).inbound).toEqual({ type: 'mx', host: a.domain, value: `10 ${HOSTNAME}`, status: 'pending', lastCheckedAt: null });
    await t.api('DELETE', `/inbound/routes/${route.id}`, { key: a.key });
    expect(await records(a.domainId, a.key)).not.toHaveProperty('inbound');
  });

  it('is verified like the other records: found, missing, another host, and never needed for `verified`', async () => {
    const a = await tenant();
    await createRoute(a.key, { channelId: a.channelId, address: `support@${a.domain}` });
    const before = await records(a.domainId, a.key);
    publishAll(dns, before);
    const missing = await t.api('POST', `/domains/${a.domainId}/verify`, { key: a.key });
    expect(missing.status).toBe(200);
    expect([missing.body.verified, missing.body.inbound.status, missing.body.inbound.check.result]).toEqual([true, 'failed', 'missing']);
    dns.set(a.domain, 'MX', [{ priority: 10, exchange: 'aspmx.l.google.com' }]);
    const elsewhere = (await t.api('POST', `/domains/${a.domainId}/verify`, { key: a.key })).body.inbound;
    expect([elsewhere.status, elsewhere.check.result, elsewhere.check.found]).toEqual(['failed', 'mismatch', ['10 aspmx.l.google.com']]);
    publish(dns, before.inbound);
    const found = (await t.api('POST', `/domains/${a.domainId}/verify`, { key: a.key })).body.inbound;
    expect([found.status, found.check.result]).toEqual(['verified', 'match']);
    expect((await records(a.domainId, a.key)).inbound).toMatchObject({ status: 'verified', lastCheckedAt: expect.any(String) });
    dns.remove(a.domain, 'MX');
    expect((await t.api('POST', `/domains/${a.domainId}/verify`, { key: a.key })).body.inbound.status).toBe('failing');
  });
});
