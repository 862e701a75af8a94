/**
 * /domains against a real daemon: creation with DKIM keys, names, listing, links to channels,
 * access rules, deletion and persistence. Verification and rotation: domains-verify.test.ts.
 */
import crypto from 'node:crypto';
import { domainToASCII } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDaemon, startDaemonWithDns, stopDaemonWithDns, type TestDaemon } from '../support/daemon.js';
import type { TestDns } from '../support/dns-server.js';
import { channelKey, HOSTNAME, newAccount, newChannel, newDomain, uniqueName } from '../support/domains.js';
import { publishAll } from '../support/sending.js';

let t: TestDaemon;
let dns: TestDns;

beforeAll(async () => ({ t, dns } = await startDaemonWithDns({ hostname: HOSTNAME })));
afterAll(() => stopDaemonWithDns({ t, dns }));

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

function publicKeyOf(dnsValue: string): crypto.KeyObject {
  const p = /p=([^;]+)/.exec(dnsValue)![1].replace(/\s+/g, '');
  const k = /k=([^;\s]+)/.exec(dnsValue)![1];
  const der = Buffer.from(p, 'base64');
  // ed25519 records carry the raw key (RFC 8463); wrap it in its SPKI prefix to load it.
  const spki = k === 'ed25519' ? Buffer.concat([Buffer.from('302a300506032b6570032100', 'hex'), der]) : der;
  return crypto.createPublicKey({ key: spki, format: 'der', type: 'spki' });
}

describe('creating a domain', () => {
  it('answers 200 with the domain, an RSA-2048 DKIM record at a fresh selector and the pending return-path records', async () => {
    const name = uniqueName('acme');
    const res = await t.api('POST', '/domains', { body: { name } });
    expect(res.status).toBe(200);
    const d = res.body;
    expect(d).toMatchObject({ name, verified: false, channels: [] });
    expect(d.id).toMatch(UUID);
    expect(Date.parse(d.createdAt)).not.toBeNaN();
    const active = d.dnsRecords.domainKeyActive;
    expect(active).toMatchObject({ type: 'txt', status: 'pending', lastCheckedAt: null });
    expect(active.host).toMatch(new RegExp(`^pr\\d{6}[0-9a-f]{4}\\._domainkey\\.${name.replace(/\./g, '\\.')}$`));
    expect(active.value).toMatch(/^v=DKIM1; k=rsa; p=[A-Za-z0-9+/=]+$/);
    expect(publicKeyOf(active.value).asymmetricKeyDetails?.modulusLength).toBe(2048);
    expect(d.dnsRecords.domainKeyPending).toBeNull();
    expect(d.dnsRecords.returnPath).toEqual([
      { type: 'mx', host: `bounces.${name}`, value: `10 ${HOSTNAME}`, status: 'pending', lastCheckedAt: null },
      { type: 'txt', host: `bounces.${name}`, value: `v=spf1 a:${HOSTNAME} ~all`, status: 'pending', lastCheckedAt: null },
    ]);
  });

  it('makes an ed25519 key when the body asks for one, and signing gets the matching private key', async () => {
    const d = await newDomain(t, { name: uniqueName(), dkimAlgorithm: 'ed25519' });
    const value = d.dnsRecords.domainKeyActive.value;
    expect(value).toMatch(/^v=DKIM1; k=ed25519; p=/);
    expect(Buffer.from(/p=(.+)$/.exec(value)![1], 'base64')).toHaveLength(32);
    const key = (await t.daemon.store.domains.signingKey({ accountId: t.accountId, domainName: d.name }))!;
    expect(key).toMatchObject({ domain: d.name, algorithm: 'ed25519', selector: d.dnsRecords.domainKeyActive.host.split('.')[0] });
    const derived = crypto.createPublicKey(key.privateKeyPem).export({ format: 'der', type: 'spki' });
    expect(derived.equals(publicKeyOf(value).export({ format: 'der', type: 'spki' }))).toBe(true);
  });

  it('never shows the private key in any response', async () => {
    const ch = await newChannel(t);
    const d = await newDomain(t, { name: uniqueName(), channelIds: [ch] });
    const pem = (await t.daemon.store.domains.signingKey({ accountId: t.accountId, domainName: d.name }))!.privateKeyPem;
    const secret = pem.split('\n')[1]; // a line of the base64 key body
    const responses = [
      { status: 200, body: d },
      await t.api('GET', `/domains/${d.id}`),
      await t.api('GET', '/domains?limit=500'),
      await t.api('PATCH', `/domains/${d.id}`, { body: { channelIds: [ch] } }),
      await t.api('POST', `/domains/${d.id}/verify`),
      await t.api('POST', `/domains/${d.id}/rotate-key`),
    ];
    expect(responses.map((r) => r.status)).toEqual([200, 200, 200, 200, 200, 200]);
    for (const body of responses.map((r) => JSON.stringify(r.body))) {
      expect(body).not.toContain(secret);
      expect(body).not.toMatch(/PRIVATE KEY|privateKey/);
    }
  });

  it('stores an internationalized name as punycode and finds it by its Unicode form', async () => {
    const suffix = Math.random().toString(36).slice(2, 6);
    const d = await newDomain(t, { name: `Bücher-${suffix}.de` });
    const ascii = domainToASCII(`bücher-${suffix}.de`);
    expect(ascii).toMatch(/^xn--/);
    expect(d.name).toBe(ascii);
    expect(d.dnsRecords.domainKeyActive.host.endsWith(`._domainkey.${ascii}`)).toBe(true);
    const list = await t.api('GET', `/domains?name=${encodeURIComponent(`BÜCHER-${suffix}`)}`);
    expect(list.body.results.map((r: { id: string }) => r.id)).toEqual([d.id]);
  });

  it('lower-cases the name and drops a trailing root dot', async () => {
    const name = uniqueName('shop');
    const d = await newDomain(t, { name: `News.${name.toUpperCase()}.` });
    expect(d.name).toBe(`news.${name}`);
  });

  it.each([
    ['nodot', 'invalid_format'],
    ['under_score.com', 'invalid_format'],
    ['double..dot.com', 'invalid_format'],
    ['-leading.com', 'invalid_format'],
    ['trailing-.com', 'invalid_format'],
    [`${'a'.repeat(64)}.com`, 'invalid_format'],
    ['192.168.10.1', 'invalid_format'],
    ['has space.com', 'invalid_format'],
    ['a%41.com', 'invalid_format'],
    ['*.wildcard.com', 'invalid_format'],
    ['xn--zz.com', 'invalid_format'],
    ['example.com', 'reserved'],
    ['mail.example.org', 'reserved'],
    ['shop.test', 'reserved'],
    ['printer.local', 'reserved'],
    ['my.localhost', 'reserved'],
    ['x.invalid', 'reserved'],
  ])('refuses the name %j with 422 validation_failed and code %s on /name', async (name, code) => {
    const res = await t.api('POST', '/domains', { body: { name } });
    expect(res.status).toBe(422);
    expect(res.body.code).toBe('validation_failed');
    expect(res.body.errors['/name'][0].code).toBe(code);
  });

  it('refuses a name the account already has, whatever its case, but lets another account register it', async () => {
    const name = uniqueName('dup');
    await newDomain(t, { name });
    const again = await t.api('POST', '/domains', { body: { name: `${name.toUpperCase()}.` } });
    expect(again.status).toBe(422);
    expect(again.body.errors['/name']).toEqual([{ code: 'duplicate', message: expect.stringContaining(name) }]);
    const other = await newAccount(t);
    expect((await t.api('POST', '/domains', { key: other.key, body: { name } })).status).toBe(200);
  });

  it('reports schema problems with their pointers: missing name, unknown field, bad algorithm, non-UUID channel id', async () => {
    const res = await t.api('POST', '/domains', { body: { nam: 'x.com', dkimAlgorithm: 'dsa', channelIds: ['nope'] } });
    expect(res.status).toBe(422);
    expect(Object.keys(res.body.errors).sort()).toEqual(['/channelIds/0', '/dkimAlgorithm', '/nam', '/name']);
  });

  it('links the channels given at creation and refuses unknown (404) and foreign (403) channels', async () => {
    const ch = await newChannel(t, undefined, 'transactional');
    const d = await newDomain(t, { name: uniqueName(), channelIds: [ch, ch.toUpperCase()] });
    expect(d.channels).toEqual([{ id: ch, name: 'transactional', deliveryType: 'live', deleted: false }]);

    const unknown = await t.api('POST', '/domains', { body: { name: uniqueName(), channelIds: [crypto.randomUUID()] } });
    expect(unknown.status).toBe(404);
    expect(unknown.body.code).toBe('channel_not_found');

    const other = await newAccount(t);
    const foreign = await newChannel(t, other.key);
    const res = await t.api('POST', '/domains', { body: { name: uniqueName(), channelIds: [foreign] } });
    expect(res.status).toBe(403);
  });

  it('needs an account-level key', async () => {
    const ch = await newChannel(t);
    const key = await channelKey(t, t.accountId, ch);
    const res = await t.api('POST', '/domains', { key, body: { name: uniqueName() } });
    expect(res.status).toBe(403);
  });

  it('refuses a domain beyond limits.domainsPerAccount with 403 resource_limit_exceeded', async () => {
    const small = await startDaemon({ 'dns.servers': [dns.address], 'limits.domainsPerAccount': 2 });
    try {
      for (let i = 0; i < 2; i++) expect((await small.api('POST', '/domains', { body: { name: uniqueName() } })).status).toBe(200);
      const res = await small.api('POST', '/domains', { body: { name: uniqueName() } });
      expect(res.status).toBe(403);
      expect(res.body.code).toBe('resource_limit_exceeded');
    } finally {
      await small.stop();
    }
  });
});

describe('listing domains', () => {
  it('pages in creation order with totalCount, filters by partial name and by linked channels, and omits dnsRecords', async () => {
    const a = await newAccount(t);
    const ch1 = await newChannel(t, a.key);
    const ch2 = await newChannel(t, a.key);
    const d1 = await newDomain(t, { name: 'alpha-news.com', channelIds: [ch1] }, a.key);
    const d2 = await newDomain(t, { name: 'beta-news.com', channelIds: [ch2] }, a.key);
    const d3 = await newDomain(t, { name: 'gamma.org' }, a.key);
    const ids = (res: { body: { results: { id: string }[] } }) => res.body.results.map((r) => r.id);

    const all = await t.api('GET', '/domains', { key: a.key });
    expect(all.status).toBe(200);
    expect(all.body.totalCount).toBe(3);
    expect(ids(all)).toEqual([d1.id, d2.id, d3.id]);
    expect(all.body.results[0]).toEqual({ id: d1.id, createdAt: expect.any(String), name: 'alpha-news.com', verified: false, channels: [expect.objectContaining({ id: ch1 })] });

    const page = await t.api('GET', '/domains?limit=2&offset=1', { key: a.key });
    expect(ids(page)).toEqual([d2.id, d3.id]);
    expect(page.body.totalCount).toBe(3);
    expect(ids(await t.api('GET', '/domains?name=NEWS', { key: a.key }))).toEqual([d1.id, d2.id]);
    expect(ids(await t.api('GET', `/domains?channelIds=${ch2},${crypto.randomUUID()}`, { key: a.key }))).toEqual([d2.id]);
    expect(ids(await t.api('GET', `/domains?channelIds=${ch1},${ch2}&limit=1`, { key: a.key }))).toEqual([d1.id]);
  });

  it('shows another account none of the domains', async () => {
    const a = await newAccount(t);
    const res = await t.api('GET', '/domains', { key: a.key });
    expect(res.body).toEqual({ results: [], totalCount: 0 });
  });

  it('refuses a limit outside 1-500 and channel ids that are not UUIDs with 422', async () => {
    for (const q of ['limit=0', 'limit=501', 'offset=-1', 'channelIds=abc']) {
      const res = await t.api('GET', `/domains?${q}`);
      expect(res.status, q).toBe(422);
    }
    expect((await t.api('GET', '/domains?channelIds=abc')).body.errors).toHaveProperty('/channelIds/0');
  });

  it('defaults to 25 results per page', async () => {
    const a = await newAccount(t);
    await Promise.all(Array.from({ length: 27 }, (_, i) => newDomain(t, { name: `d${i}-paging.com`, dkimAlgorithm: 'ed25519' }, a.key)));
    const res = await t.api('GET', '/domains', { key: a.key });
    expect(res.body.results).toHaveLength(25);
    expect(res.body.totalCount).toBe(27);
  });
});

describe('linking channels (PATCH)', () => {
  it('replaces the linked channels and answers with channels but without dnsRecords', async () => {
    const a = await newAccount(t);
    const ch1 = await newChannel(t, a.key, 'one');
    const ch2 = await newChannel(t, a.key, 'two');
    const d = await newDomain(t, { name: uniqueName(), channelIds: [ch1] }, a.key);

    const res = await t.api('PATCH', `/domains/${d.id}`, { key: a.key, body: { channelIds: [ch2] } });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ id: d.id, createdAt: expect.any(String), name: d.name, verified: false, channels: [{ id: ch2, name: 'two', deliveryType: 'live', deleted: false }] });
    expect(await t.daemon.store.domains.findSending({ accountId: a.accountId, channelId: ch1, domainName: d.name })).toBeUndefined();
    expect((await t.daemon.store.domains.findSending({ accountId: a.accountId, channelId: ch2, domainName: d.name.toUpperCase() }))?.domain).toMatchObject({ id: d.id, verified: false });

    const cleared = await t.api('PATCH', `/domains/${d.id}`, { key: a.key, body: { channelIds: [] } });
    expect(cleared.body.channels).toEqual([]);
  });

  it('answers 404 channel_not_found for an unknown channel, 403 for another account\'s and changes nothing', async () => {
    const ch = await newChannel(t);
    const d = await newDomain(t, { name: uniqueName(), channelIds: [ch] });
    const unknown = await t.api('PATCH', `/domains/${d.id}`, { body: { channelIds: [ch, crypto.randomUUID()] } });
    expect(unknown.status).toBe(404);
    expect(unknown.body.code).toBe('channel_not_found');

    const other = await newAccount(t);
    const foreign = await newChannel(t, other.key);
    const res = await t.api('PATCH', `/domains/${d.id}`, { body: { channelIds: [foreign] } });
    expect(res.status).toBe(403);
    expect((await t.api('GET', `/domains/${d.id}`)).body.channels.map((c: { id: string }) => c.id)).toEqual([ch]);
  });

  it('requires channelIds as an array of UUIDs', async () => {
    const d = await newDomain(t, { name: uniqueName() });
    expect((await t.api('PATCH', `/domains/${d.id}`, { body: {} })).body.errors).toHaveProperty('/channelIds');
    expect((await t.api('PATCH', `/domains/${d.id}`, { body: { channelIds: ['x'] } })).body.errors).toHaveProperty('/channelIds/0');
  });
});

describe('access to domains', () => {
  it('answers 403 to another account on GET, PATCH, DELETE, verify and rotate-key, and changes nothing', async () => {
    const d = await newDomain(t, { name: uniqueName() });
    const other = await newAccount(t);
    const calls: [string, string, unknown?][] = [
      ['GET', `/domains/${d.id}`],
      ['PATCH', `/domains/${d.id}`, { channelIds: [] }],
      ['DELETE', `/domains/${d.id}`],
      ['POST', `/domains/${d.id}/verify`],
      ['POST', `/domains/${d.id}/rotate-key`],
    ];
    for (const [method, path, body] of calls) {
      const res = await t.api(method, path, { key: other.key, body });
      expect(res.status, `${method} ${path}`).toBe(403);
    }
    const still = await t.api('GET', `/domains/${d.id}`);
    expect(still.status).toBe(200);
    expect(still.body.dnsRecords.domainKeyPending).toBeNull();
    expect(still.body.dnsRecords.domainKeyActive.lastCheckedAt).toBeNull();
  });

  it('answers 404 not_found for an unknown id, 422 on /id for a malformed one', async () => {
    const id = crypto.randomUUID();
    const res = await t.api('GET', `/domains/${id}`);
    expect(res.status).toBe(404);
    expect(res.body.code).toBe('not_found');
    expect(res.body.detail).toContain(id);
    expect((await t.api('POST', `/domains/${id}/verify`)).status).toBe(404);
    const malformed = await t.api('GET', '/domains/not-a-uuid');
    expect(malformed.status).toBe(422);
    expect(Object.keys(malformed.body.errors)).toEqual(['/id']);
    expect((await t.api('POST', '/domains/not-a-uuid/verify')).status).toBe(422);
  });

  it('lets a channel key read and verify only the domains linked to its channel, and change none', async () => {
    const a = await newAccount(t);
    const mine = await newChannel(t, a.key);
    const theirs = await newChannel(t, a.key);
    const linked = await newDomain(t, { name: uniqueName(), channelIds: [mine] }, a.key);
    const unlinked = await newDomain(t, { name: uniqueName(), channelIds: [theirs] }, a.key);
    const key = await channelKey(t, a.accountId, mine);

    expect((await t.api('GET', `/domains/${linked.id}`, { key })).status).toBe(200);
    expect((await t.api('POST', `/domains/${linked.id}/verify`, { key })).status).toBe(200);
    expect((await t.api('GET', `/domains/${unlinked.id}`, { key })).status).toBe(403);
    const list = await t.api('GET', '/domains', { key });
    expect(list.body.results.map((r: { id: string }) => r.id)).toEqual([linked.id]);
    expect((await t.api('GET', `/domains?channelIds=${theirs}`, { key })).body.totalCount).toBe(0);
    expect((await t.api('PATCH', `/domains/${linked.id}`, { key, body: { channelIds: [mine] } })).status).toBe(403);
    expect((await t.api('POST', `/domains/${linked.id}/rotate-key`, { key })).status).toBe(403);
    expect((await t.api('DELETE', `/domains/${linked.id}`, { key })).status).toBe(403);
  });

  it('answers 401 without a valid key', async () => {
    expect((await t.api('GET', '/domains', { key: null })).status).toBe(401);
    expect((await t.api('POST', '/domains', { key: 'pr_wrong', body: { name: uniqueName() } })).status).toBe(401);
  });
});

describe('deleting', () => {
  it('answers 204 without a body, then 404; sending from it stops and the name is free again', async () => {
    const ch = await newChannel(t);
    const d = await newDomain(t, { name: uniqueName(), channelIds: [ch] });
    const res = await t.api('DELETE', `/domains/${d.id}`);
    expect(res.status).toBe(204);
    expect(res.body).toBeNull();
    expect((await t.api('GET', `/domains/${d.id}`)).status).toBe(404);
    expect((await t.api('DELETE', `/domains/${d.id}`)).status).toBe(404);
    expect(await t.daemon.store.domains.findSending({ accountId: t.accountId, channelId: ch, domainName: d.name })).toBeUndefined();
    expect(await t.daemon.store.domains.signingKey({ accountId: t.accountId, domainName: d.name })).toBeUndefined();
    expect(await t.daemon.store.domains.dkimSelectors(d.id)).toEqual([]);
    expect((await t.api('POST', '/domains', { body: { name: d.name } })).status).toBe(200);
  });

  it('keeps a deleted channel listed as deleted:true but unlinked for sending, until a PATCH replaces the links', async () => {
    const gone = await newChannel(t, undefined, 'old');
    const kept = await newChannel(t, undefined, 'new');
    const d = await newDomain(t, { name: uniqueName(), channelIds: [gone, kept] });
    expect((await t.api('DELETE', `/channels/${gone}`)).status).toBe(204);

    const after = await t.api('GET', `/domains/${d.id}`);
    expect(after.body.channels).toEqual([
      { id: kept, name: 'new', deliveryType: 'live', deleted: false },
      { id: gone, name: 'old', deliveryType: 'live', deleted: true },
    ]);
    expect(await t.daemon.store.domains.findSending({ accountId: t.accountId, channelId: gone, domainName: d.name })).toBeUndefined();
    expect((await t.api('GET', `/domains?channelIds=${gone}`)).body.totalCount).toBe(0);
    expect((await t.api('PATCH', `/domains/${d.id}`, { body: { channelIds: [gone] } })).status).toBe(404);

    const patched = await t.api('PATCH', `/domains/${d.id}`, { body: { channelIds: [kept] } });
    expect(patched.body.channels).toEqual([{ id: kept, name: 'new', deliveryType: 'live', deleted: false }]);
  });
});

describe('persistence', () => {
  it('keeps domains, statuses, links and keys across a restart', async () => {
    const ch = await newChannel(t);
    const d = await newDomain(t, { name: uniqueName(), channelIds: [ch] });
    publishAll(dns, d.dnsRecords);
    expect((await t.api('POST', `/domains/${d.id}/verify`)).status).toBe(200);
    const before = (await t.api('GET', `/domains/${d.id}`)).body;
    const key = await t.daemon.store.domains.signingKey({ accountId: t.accountId, domainName: d.name });

    await t.restart();

    const after = await t.api('GET', `/domains/${d.id}`);
    expect(after.body).toEqual(before);
    expect(after.body.verified).toBe(true);
    expect(await t.daemon.store.domains.signingKey({ accountId: t.accountId, domainName: d.name })).toEqual(key);
    expect((await t.daemon.store.domains.findSending({ accountId: t.accountId, channelId: ch, domainName: d.name }))?.domain.verified).toBe(true);
  });
});
