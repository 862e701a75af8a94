/**
 * The store port's sending domains (store/port/domains.ts), run against every engine: create,
 * read, list, links, deletion, DKIM keys (pending, companion, promotion by a check, the signing
 * key), the sending-domain lookup and the re-check list; what an unknown id answers; and the
 * atomic rules under concurrent callers (one domain per name and account, the per-account limit).
 */
import { expect, it } from 'vitest';
import { AppError } from '../../src/domain/errors.js';
import type { CheckResults, SendingDomain } from '../../src/domain/sending-domain.js';
import type { NewDkimKey, NewDomain } from '../../src/store/port/domains.js';
import type { StorePort } from '../../src/store/port/index.js';
import { eachEngine } from './engines.js';

const UNKNOWN_ID = '00000000-0000-4000-8000-000000000000';
const MAX = 100;
const RETURN_PATH = [{ type: 'mx' as const, host: 'bounce.example.com', value: '10 mx.example.net' }];

/** Key material is opaque to the store: any strings do. */
function key(selector: string, over: Partial<NewDkimKey> = {}): NewDkimKey {
  return { selector, algorithm: 'rsa', privateKeyPem: `pem-${selector}`, dnsValue: `v=DKIM1; k=rsa; p=${selector}`, ...over };
}

function ed25519Key(selector: string): NewDkimKey {
  return key(selector, { algorithm: 'ed25519', dnsValue: `v=DKIM1; k=ed25519; p=${selector}` });
}

function newDomain(accountId: string, name: string, over: Partial<NewDomain> = {}): NewDomain {
  return { accountId, name, channelIds: [], key: key(`s-${name}`), returnPath: RETURN_PATH, maxPerAccount: MAX, ...over };
}

async function account(store: StorePort): Promise<string> {
  return (await store.accounts.create({ name: 'a', state: 'active' })).id;
}

async function channel(store: StorePort, accountId: string): Promise<string> {
  return (await store.channels.create({ accountId, name: 'c', deliveryType: 'live', tracking: { links: false, opens: false }, maxPerAccount: MAX })).id;
}

/** A check that finds every record of the domain (its keys and return path) published. */
function allFound(d: SendingDomain): CheckResults {
  const selectors = [d.activeKey, ...(d.pendingKey ? [d.pendingKey] : [])].flatMap((k) => [k.selector, ...(k.rsaCompanion ? [k.rsaCompanion.selector] : [])]);
  return { keys: Object.fromEntries(selectors.map((s) => [s, 'match'])), returnPath: RETURN_PATH.map((record) => ({ record, outcome: 'match' })) };
}

async function race<T>(calls: Array<() => Promise<T>>): Promise<{ ok: T[]; errors: unknown[] }> {
  const settled = await Promise.allSettled(calls.map((c) => c()));
  return {
    ok: settled.flatMap((s) => (s.status === 'fulfilled' ? [s.value] : [])),
    errors: settled.flatMap((s) => (s.status === 'rejected' ? [s.reason as unknown] : [])),
  };
}

function codeOf(err: unknown): string | undefined {
  return err instanceof AppError ? err.code : undefined;
}

/** The 422 of a name the account has already: validation_failed with /name duplicate. */
function isDuplicateName(err: unknown): boolean {
  return err instanceof AppError && err.code === 'validation_failed' && err.errors?.['/name']?.[0]?.code === 'duplicate';
}

eachEngine('domains', (ctx) => {
  it('registers a domain with its key and reads it back by id, by name, in the count and the list', async () => {
    const accountId = await account(ctx.store);
    const channelId = await channel(ctx.store, accountId);
    const d = await ctx.store.domains.create(newDomain(accountId, 'example.com', { channelIds: [channelId] }));
    expect(d).toMatchObject({ accountId, name: 'example.com', verified: false, channelIds: [channelId], deletedChannelIds: [], pendingKey: null, retiredKeys: [] });
    expect(d.activeKey).toMatchObject({ selector: 's-example.com', algorithm: 'rsa', record: { type: 'txt', status: 'pending' } });
    expect(d.returnPath).toEqual([{ ...RETURN_PATH[0], status: 'pending', lastCheckedAt: null }]);
    expect(await ctx.store.domains.get(d.id)).toEqual(d);
    expect(await ctx.store.domains.findByName(accountId, 'example.com')).toEqual(d);
    expect(await ctx.store.domains.count(accountId)).toBe(1);
    expect(await ctx.store.domains.list({ accountId, limit: 10, offset: 0 })).toEqual({ results: [d], totalCount: 1 });
    expect(await ctx.store.domains.dkimSelectors(d.id)).toEqual(['s-example.com']);
    const store = await ctx.reopen();
    expect(await store.domains.get(d.id)).toEqual(d);
  });

  it('answers undefined, false, 0 or nothing for an unknown domain', async () => {
    const accountId = await account(ctx.store);
    expect(await ctx.store.domains.get(UNKNOWN_ID)).toBeUndefined();
    expect(await ctx.store.domains.get('not-a-domain-id')).toBeUndefined();
    expect(await ctx.store.domains.findByName(accountId, 'example.com')).toBeUndefined();
    expect(await ctx.store.domains.count(accountId)).toBe(0);
    expect(await ctx.store.domains.setChannels(UNKNOWN_ID, [])).toBeUndefined();
    expect(await ctx.store.domains.delete(UNKNOWN_ID)).toBe(false);
    expect(await ctx.store.domains.setPendingKey(UNKNOWN_ID, key('p'))).toBeUndefined();
    expect(await ctx.store.domains.addRsaCompanion(UNKNOWN_ID, 's', key('c'))).toBeUndefined();
    expect(await ctx.store.domains.recordCheck(UNKNOWN_ID, { keys: {}, returnPath: [] }, new Date().toISOString())).toBeUndefined();
    expect(await ctx.store.domains.dkimSelectors(UNKNOWN_ID)).toEqual([]);
    expect(await ctx.store.domains.signingKey({ accountId, domainName: 'example.com' })).toBeUndefined();
    expect(await ctx.store.domains.findSending({ accountId, channelId: UNKNOWN_ID, domainName: 'example.com' })).toBeUndefined();
    expect(await ctx.store.domains.toRecheck()).toEqual([]);
  });

  it('lists an account’s domains oldest first, by part of the name (U-label or A-label) and linked channel, one page with the total', async () => {
    const accountId = await account(ctx.store);
    const [c1, c2] = [await channel(ctx.store, accountId), await channel(ctx.store, accountId)];
    const a = await ctx.store.domains.create(newDomain(accountId, 'alpha.example', { channelIds: [c1] }));
    const b = await ctx.store.domains.create(newDomain(accountId, 'xn--bcher-kva.example', { channelIds: [c1, c2] }));
    const c = await ctx.store.domains.create(newDomain(accountId, 'gamma.example'));
    await ctx.store.domains.create(newDomain(await account(ctx.store), 'alpha.example'));
    const made = [a, b, c].sort((x, y) => (x.createdAt < y.createdAt ? -1 : x.createdAt > y.createdAt ? 1 : x.id < y.id ? -1 : 1));
    const list = (f: { name?: string; channelIds?: string[]; limit?: number; offset?: number }) => ctx.store.domains.list({ accountId, limit: 10, offset: 0, ...f });
    expect(await list({})).toEqual({ results: made, totalCount: 3 });
    expect(await list({ name: 'ALPHA' })).toEqual({ results: [a], totalCount: 1 });
    expect(await list({ name: 'bücher' })).toEqual({ results: [b], totalCount: 1 });
    expect(await list({ name: 'xn--bcher' })).toEqual({ results: [b], totalCount: 1 });
    expect(await list({ channelIds: [c2] })).toEqual({ results: [b], totalCount: 1 });
    expect(await list({ channelIds: [c1, c2] })).toEqual({ results: made.filter((d) => d !== c), totalCount: 2 });
    expect(await list({ limit: 1, offset: 1 })).toEqual({ results: [made[1]], totalCount: 3 });
  });

  it('replaces the links with live channels of the account only, and refuses others with channel_not_found', async () => {
    const accountId = await account(ctx.store);
    const [c1, c2, gone] = [await channel(ctx.store, accountId), await channel(ctx.store, accountId), await channel(ctx.store, accountId)];
    const foreign = await channel(ctx.store, await account(ctx.store));
    const d = await ctx.store.domains.create(newDomain(accountId, 'example.com', { channelIds: [c1] }));
    const u = await ctx.store.domains.setChannels(d.id, [c2]);
    expect(u).toMatchObject({ channelIds: [c2], deletedChannelIds: [] });
    await ctx.store.channels.delete(gone);
    for (const bad of [gone, foreign, UNKNOWN_ID]) {
      expect(codeOf(await ctx.store.domains.setChannels(d.id, [c1, bad]).catch((e: unknown) => e))).toBe('channel_not_found');
    }
    expect(await ctx.store.domains.get(d.id)).toEqual(u);
  });

  it('moves a deleted channel from the links to deletedChannelIds, and the next setChannels drops it', async () => {
    const accountId = await account(ctx.store);
    const [c1, c2] = [await channel(ctx.store, accountId), await channel(ctx.store, accountId)];
    const d = await ctx.store.domains.create(newDomain(accountId, 'example.com', { channelIds: [c1, c2] }));
    await ctx.store.channels.delete(c1);
    expect(await ctx.store.domains.get(d.id)).toMatchObject({ channelIds: [c2], deletedChannelIds: [c1] });
    expect(await ctx.store.domains.setChannels(d.id, [c2])).toMatchObject({ channelIds: [c2], deletedChannelIds: [] });
  });

  it('deletes a domain with its name and private keys: the name can be registered again', async () => {
    const accountId = await account(ctx.store);
    const d = await ctx.store.domains.create(newDomain(accountId, 'example.com'));
    await ctx.store.domains.setPendingKey(d.id, key('next'));
    expect(await ctx.store.domains.delete(d.id)).toBe(true);
    expect(await ctx.store.domains.get(d.id)).toBeUndefined();
    expect(await ctx.store.domains.findByName(accountId, 'example.com')).toBeUndefined();
    expect(await ctx.store.domains.dkimSelectors(d.id)).toEqual([]);
    expect(await ctx.store.domains.count(accountId)).toBe(0);
    expect(await ctx.store.domains.delete(d.id)).toBe(false);
    await expect(ctx.store.domains.create(newDomain(accountId, 'example.com'))).resolves.toMatchObject({ name: 'example.com' });
  });
});

eachEngine('domain keys and checks', (ctx) => {
  it('replaces a pending key not yet promoted and deletes its private key', async () => {
    const d = await ctx.store.domains.create(newDomain(await account(ctx.store), 'example.com'));
    const first = await ctx.store.domains.setPendingKey(d.id, key('p1'));
    expect(first?.pendingKey).toMatchObject({ selector: 'p1', record: { host: 'p1._domainkey.example.com', status: 'pending' } });
    const second = await ctx.store.domains.setPendingKey(d.id, key('p2'));
    expect(second?.pendingKey?.selector).toBe('p2');
    expect((await ctx.store.domains.dkimSelectors(d.id)).sort()).toEqual(['p2', 's-example.com']);
  });

  it('verifies a domain whose records a check found, promotes a found pending key and deletes the retired private key', async () => {
    const accountId = await account(ctx.store);
    const channelId = await channel(ctx.store, accountId);
    const d = await ctx.store.domains.create(newDomain(accountId, 'example.com', { channelIds: [channelId] }));
    const at = new Date().toISOString();
    const verified = await ctx.store.domains.recordCheck(d.id, allFound(d), at);
    expect(verified).toMatchObject({ verified: true, updatedAt: at, activeKey: { record: { status: 'verified', lastCheckedAt: at } } });
    expect(await ctx.store.domains.toRecheck()).toEqual([d.id]);
    const pending = (await ctx.store.domains.setPendingKey(d.id, key('next')))!;
    const promoted = await ctx.store.domains.recordCheck(d.id, allFound(pending), new Date().toISOString());
    expect(promoted).toMatchObject({ activeKey: { selector: 'next' }, pendingKey: null, retiredKeys: [{ selector: 's-example.com' }] });
    expect(await ctx.store.domains.dkimSelectors(d.id)).toEqual(['next']);
    expect(await ctx.store.domains.signingKey({ accountId, domainName: 'example.com' })).toEqual({ domain: 'example.com', selector: 'next', algorithm: 'rsa', privateKeyPem: 'pem-next' });
  });

  it('gives an active ed25519 key its RSA companion once, and none after a rotation', async () => {
    const accountId = await account(ctx.store);
    const d = await ctx.store.domains.create(newDomain(accountId, 'example.com', { key: ed25519Key('ed') }));
    const withCompanion = await ctx.store.domains.addRsaCompanion(d.id, 'ed', key('ed-rsa'));
    expect(withCompanion?.activeKey.rsaCompanion).toMatchObject({ selector: 'ed-rsa', record: { host: 'ed-rsa._domainkey.example.com' } });
    const again = await ctx.store.domains.addRsaCompanion(d.id, 'ed', key('ed-rsa2'));
    expect(again).toEqual(withCompanion);
    expect(await ctx.store.domains.addRsaCompanion(d.id, 'other', key('x-rsa'))).toEqual(withCompanion);
    expect((await ctx.store.domains.dkimSelectors(d.id)).sort()).toEqual(['ed', 'ed-rsa']);
  });

  it('signs with the companion only once its record is verified', async () => {
    const accountId = await account(ctx.store);
    const d = await ctx.store.domains.create(newDomain(accountId, 'example.com', { key: { ...ed25519Key('ed'), rsaCompanion: key('ed-rsa') } }));
    expect(await ctx.store.domains.signingKey({ accountId, domainName: 'example.com' })).toEqual({ domain: 'example.com', selector: 'ed', algorithm: 'ed25519', privateKeyPem: 'pem-ed' });
    await ctx.store.domains.recordCheck(d.id, allFound(d), new Date().toISOString());
    expect(await ctx.store.domains.signingKey({ accountId, domainName: 'EXAMPLE.com.' })).toMatchObject({
      selector: 'ed',
      rsaCompanion: { selector: 'ed-rsa', algorithm: 'rsa', privateKeyPem: 'pem-ed-rsa' },
    });
  });

  it('finds the domain a live linked channel may send from, normalizing the name, and whether it can be signed', async () => {
    const accountId = await account(ctx.store);
    const [linked, other] = [await channel(ctx.store, accountId), await channel(ctx.store, accountId)];
    const d = await ctx.store.domains.create(newDomain(accountId, 'xn--bcher-kva.example', { channelIds: [linked] }));
    for (const domainName of ['xn--bcher-kva.example', 'BÜCHER.example.', ' bücher.example ']) {
      expect(await ctx.store.domains.findSending({ accountId, channelId: linked, domainName })).toEqual({ domain: d, activeKeyStored: true });
    }
    expect(await ctx.store.domains.findSending({ accountId, channelId: other, domainName: 'bücher.example' })).toBeUndefined();
    expect(await ctx.store.domains.findSending({ accountId: await account(ctx.store), channelId: linked, domainName: 'bücher.example' })).toBeUndefined();
    await ctx.store.channels.delete(linked);
    expect(await ctx.store.domains.findSending({ accountId, channelId: linked, domainName: 'bücher.example' })).toBeUndefined();
  });
});

eachEngine('domain rules', (ctx) => {
  it('refuses a name the account has (validation_failed, duplicate), not one another account has', async () => {
    const accountId = await account(ctx.store);
    await ctx.store.domains.create(newDomain(accountId, 'example.com'));
    expect(isDuplicateName(await ctx.store.domains.create(newDomain(accountId, 'example.com')).catch((e: unknown) => e))).toBe(true);
    await expect(ctx.store.domains.create(newDomain(await account(ctx.store), 'example.com'))).resolves.toMatchObject({ name: 'example.com' });
    expect(await ctx.store.domains.count(accountId)).toBe(1);
  });

  it('refuses the domain over the limit with resource_limit_exceeded, and a duplicate name before the limit', async () => {
    const accountId = await account(ctx.store);
    await ctx.store.domains.create(newDomain(accountId, 'a.example', { maxPerAccount: 1 }));
    expect(codeOf(await ctx.store.domains.create(newDomain(accountId, 'b.example', { maxPerAccount: 1 })).catch((e: unknown) => e))).toBe('resource_limit_exceeded');
    expect(isDuplicateName(await ctx.store.domains.create(newDomain(accountId, 'a.example', { maxPerAccount: 1 })).catch((e: unknown) => e))).toBe(true);
  });

  it('stores nothing when a channel to link is not a live channel of the account', async () => {
    const accountId = await account(ctx.store);
    const gone = await channel(ctx.store, accountId);
    await ctx.store.channels.delete(gone);
    const foreign = await channel(ctx.store, await account(ctx.store));
    for (const bad of [gone, foreign, UNKNOWN_ID]) {
      expect(codeOf(await ctx.store.domains.create(newDomain(accountId, 'example.com', { channelIds: [bad] })).catch((e: unknown) => e))).toBe('channel_not_found');
    }
    expect(await ctx.store.domains.count(accountId)).toBe(0);
    expect(await ctx.store.domains.findByName(accountId, 'example.com')).toBeUndefined();
  });

  it('registers one name once under racing creates: one wins, the others get the duplicate 422', async () => {
    const accountId = await account(ctx.store);
    const { ok, errors } = await race(Array.from({ length: 10 }, (_, i) => () => ctx.store.domains.create(newDomain(accountId, 'example.com', { key: key(`s${i}`) }))));
    expect(ok).toHaveLength(1);
    expect(errors).toHaveLength(9);
    expect(errors.every(isDuplicateName)).toBe(true);
    expect(await ctx.store.domains.list({ accountId, limit: 100, offset: 0 })).toEqual({ results: ok, totalCount: 1 });
    expect(await ctx.store.domains.dkimSelectors(ok[0].id)).toEqual([ok[0].activeKey.selector]);
  });

  it('never exceeds the limit under racing creates of different names', async () => {
    const accountId = await account(ctx.store);
    await ctx.store.domains.create(newDomain(accountId, 'first.example', { maxPerAccount: 4 }));
    const { ok, errors } = await race(Array.from({ length: 12 }, (_, i) => () => ctx.store.domains.create(newDomain(accountId, `d${i}.example`, { maxPerAccount: 4 }))));
    expect(ok).toHaveLength(3);
    expect(errors.map(codeOf)).toEqual(Array(9).fill('resource_limit_exceeded'));
    expect(await ctx.store.domains.count(accountId)).toBe(4);
  });

  it('keeps both rules under racing creates that mix one name and the limit', async () => {
    const accountId = await account(ctx.store);
    const calls = Array.from({ length: 12 }, (_, i) => () => ctx.store.domains.create(newDomain(accountId, i % 2 ? 'same.example' : `d${i}.example`, { key: key(`s${i}`), maxPerAccount: 3 })));
    const { ok, errors } = await race(calls);
    expect(ok).toHaveLength(3);
    expect(ok.filter((d) => d.name === 'same.example').length).toBeLessThanOrEqual(1);
    expect(errors.every((e) => isDuplicateName(e) || codeOf(e) === 'resource_limit_exceeded')).toBe(true);
    expect(await ctx.store.domains.count(accountId)).toBe(3);
  });
});
