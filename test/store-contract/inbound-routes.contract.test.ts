/**
 * InboundRoutesPort (store/port/inbound-routes.ts), run against every engine: routes with their
 * signing keys, read, listed (paged, by channel), updated, re-keyed and deleted; the match of a
 * recipient (exact address over plus-addressing over the catch-all, case-insensitive); a domain's
 * oldest enabled route (where postmaster@ goes when nothing matches it); the routes
 * going with their channel and their domain; and the atomic rules under concurrent callers (the
 * per-account limit, one route per address across accounts).
 */
import { expect, it } from 'vitest';
import { AppError } from '../../src/domain/errors.js';
import type { StorePort } from '../../src/store/port/index.js';
import type { NewInboundRouteInput } from '../../src/store/port/inbound-routes.js';
import { waitFor } from '../support/wait.js';
import { eachEngine } from './engines.js';

const UNKNOWN_ID = '00000000-0000-4000-8000-000000000000';

interface Tenant {
  accountId: string;
  channelId: string;
  domainId: string;
}

async function tenant(store: StorePort, domain = 'acme-shop.com'): Promise<Tenant> {
  const accountId = (await store.accounts.create({ name: 'a', state: 'active' })).id;
  const channelId = (await store.channels.create({ accountId, name: 'c', deliveryType: 'live', tracking: { links: false, opens: false }, maxPerAccount: 100 })).id;
  const key = { selector: `s-${domain}`, algorithm: 'rsa' as const, privateKeyPem: 'pem', dnsValue: 'v=DKIM1; k=rsa; p=x' };
  const domainId = (await store.domains.create({ accountId, name: domain, channelIds: [channelId], key, returnPath: [], maxPerAccount: 100 })).id;
  return { accountId, channelId, domainId };
}

function input(t: Tenant, address: string, o: Partial<NewInboundRouteInput> = {}): NewInboundRouteInput {
  return { ...t, address, url: 'https://app.example.org/inbound', enabled: true, additionalHeaders: [], maxPerAccount: 10, ...o };
}

function fieldCode(err: unknown, pointer: string): string | undefined {
  return err instanceof AppError ? err.errors?.[pointer]?.[0]?.code : undefined;
}

function codeOf(err: unknown): string | undefined {
  return err instanceof AppError ? err.code : undefined;
}

eachEngine('inbound routes', (ctx) => {
  it('creates a route with a signing key, readable by id', async () => {
    const t = await tenant(ctx.store);
    const { route, signingKey } = await ctx.store.inboundRoutes.create(input(t, 'support@acme-shop.com', { additionalHeaders: [{ name: 'X-Token', value: 't' }] }));
    expect(route).toEqual({
      id: expect.any(String),
      ...t,
      address: 'support@acme-shop.com',
      url: 'https://app.example.org/inbound',
      enabled: true,
      additionalHeaders: [{ name: 'X-Token', value: 't' }],
      createdAt: expect.any(String),
      updatedAt: route.createdAt,
    });
    expect(signingKey).toMatch(/^whsec_/);
    expect(await ctx.store.inboundRoutes.get(route.id)).toEqual(route);
    expect(await ctx.store.inboundRoutes.signingKey(route.id)).toBe(signingKey);
    expect(await ctx.store.inboundRoutes.anyOnDomain(t.domainId)).toBe(true);
  });

  it('answers not found for an unknown route in every verb', async () => {
    expect(await ctx.store.inboundRoutes.get(UNKNOWN_ID)).toBeUndefined();
    expect(await ctx.store.inboundRoutes.signingKey(UNKNOWN_ID)).toBeNull();
    expect(await ctx.store.inboundRoutes.update(UNKNOWN_ID, { enabled: false })).toBeUndefined();
    expect(await ctx.store.inboundRoutes.regenerateSigningKey(UNKNOWN_ID)).toBeUndefined();
    expect(await ctx.store.inboundRoutes.delete(UNKNOWN_ID)).toBe(false);
    expect(await ctx.store.inboundRoutes.anyOnDomain(UNKNOWN_ID)).toBe(false);
    expect(await ctx.store.inboundRoutes.match('nobody@nowhere.example.org')).toBeUndefined();
  });

  it("lists an account's routes in creation order, paged, filtered by channel", async () => {
    const t = await tenant(ctx.store);
    const other = (await ctx.store.channels.create({ accountId: t.accountId, name: 'd', deliveryType: 'live', tracking: { links: false, opens: false }, maxPerAccount: 100 })).id;
    const made = [];
    for (const [i, channelId] of [t.channelId, other, t.channelId, other].entries()) made.push((await ctx.store.inboundRoutes.create(input({ ...t, channelId }, `r${i}@acme-shop.com`))).route);
    const byCreation = [...made].sort((a, b) => a.createdAt.localeCompare(b.createdAt) || (a.id < b.id ? -1 : 1));
    await ctx.store.inboundRoutes.create(input(await tenant(ctx.store, 'other-shop.com'), '*@other-shop.com'));
    const all = await ctx.store.inboundRoutes.list({ accountId: t.accountId, limit: 10, offset: 0 });
    expect([all.totalCount, all.results.map((r) => r.id)]).toEqual([4, byCreation.map((r) => r.id)]);
    expect((await ctx.store.inboundRoutes.list({ accountId: t.accountId, limit: 2, offset: 1 })).results.map((r) => r.id)).toEqual(byCreation.slice(1, 3).map((r) => r.id));
    const ofOther = await ctx.store.inboundRoutes.list({ accountId: t.accountId, channelIds: [other], limit: 10, offset: 0 });
    expect([ofOther.totalCount, ofOther.results.map((r) => r.id)]).toEqual([2, byCreation.filter((r) => r.channelId === other).map((r) => r.id)]);
  });

  it('updates the fields given and leaves the others; a channel must be a live channel of the account', async () => {
    const t = await tenant(ctx.store);
    const { route } = await ctx.store.inboundRoutes.create(input(t, 'support@acme-shop.com'));
    const next = await ctx.store.inboundRoutes.update(route.id, { url: 'https://other.example.org/', enabled: false });
    expect(next).toMatchObject({ url: 'https://other.example.org/', enabled: false, channelId: t.channelId, address: route.address, createdAt: route.createdAt });
    expect(await ctx.store.inboundRoutes.get(route.id)).toEqual(next);
    const foreign = await tenant(ctx.store, 'other-shop.com');
    const refused = await ctx.store.inboundRoutes.update(route.id, { channelId: foreign.channelId }).catch((e: unknown) => e);
    expect(codeOf(refused)).toBe('channel_not_found');
  });

  it('replaces the signing key at once', async () => {
    const { route, signingKey } = await ctx.store.inboundRoutes.create(input(await tenant(ctx.store), 'support@acme-shop.com'));
    const again = await ctx.store.inboundRoutes.regenerateSigningKey(route.id);
    expect(again?.signingKey).toMatch(/^whsec_/);
    expect(again?.signingKey).not.toBe(signingKey);
    expect(await ctx.store.inboundRoutes.signingKey(route.id)).toBe(again?.signingKey);
  });

  it('deletes a route with its key and frees its address', async () => {
    const t = await tenant(ctx.store);
    const { route } = await ctx.store.inboundRoutes.create(input(t, 'support@acme-shop.com'));
    expect(await ctx.store.inboundRoutes.delete(route.id)).toBe(true);
    expect(await ctx.store.inboundRoutes.get(route.id)).toBeUndefined();
    expect(await ctx.store.inboundRoutes.signingKey(route.id)).toBeNull();
    expect(await ctx.store.inboundRoutes.match('support@acme-shop.com')).toBeUndefined();
    expect(await ctx.store.inboundRoutes.anyOnDomain(t.domainId)).toBe(false);
    await ctx.store.inboundRoutes.create(input(t, 'support@acme-shop.com'));
  });

  it('matches the exact address first, then the address without its +hash, then the catch-all', async () => {
    const t = await tenant(ctx.store);
    const exact = (await ctx.store.inboundRoutes.create(input(t, 'support+vip@acme-shop.com'))).route;
    const base = (await ctx.store.inboundRoutes.create(input(t, 'support@acme-shop.com'))).route;
    const all = (await ctx.store.inboundRoutes.create(input(t, '*@acme-shop.com'))).route;
    const m = (a: string) => ctx.store.inboundRoutes.match(a).then((r) => r && { id: r.route.id, mailboxHash: r.mailboxHash });
    expect(await m('support+vip@acme-shop.com')).toEqual({ id: exact.id, mailboxHash: null });
    expect(await m('support@acme-shop.com')).toEqual({ id: base.id, mailboxHash: null });
    expect(await m('Support+Ticket-4711@ACME-shop.com')).toEqual({ id: base.id, mailboxHash: 'Ticket-4711' });
    expect(await m('sales@acme-shop.com')).toEqual({ id: all.id, mailboxHash: null });
    expect(await m('sales+q3@acme-shop.com')).toEqual({ id: all.id, mailboxHash: 'q3' });
    expect(await m('support@other-shop.com')).toBeUndefined();
    // A disabled route still matches: what that means is the listener's decision.
    await ctx.store.inboundRoutes.update(base.id, { enabled: false });
    expect((await ctx.store.inboundRoutes.match('support@acme-shop.com'))?.route).toMatchObject({ id: base.id, enabled: false });
  });

  it("gives a domain's oldest enabled route of any account (postmaster@), as routes are enabled, disabled and deleted", async () => {
    const t = await tenant(ctx.store);
    const oldest = (d: string) => ctx.store.inboundRoutes.oldestEnabledOnDomain(d).then((r) => r?.address);
    // Each route a millisecond after the one before: creation order is the order asserted (ties go by id).
    const created = async (i: NewInboundRouteInput) => {
      const { route } = await ctx.store.inboundRoutes.create(i);
      await waitFor(() => Date.now() > Date.parse(route.createdAt), { what: `the clock past ${route.createdAt}` });
      return route;
    };
    const first = await created(input(t, 'first@acme-shop.com', { enabled: false }));
    const support = await created(input(t, 'support@acme-shop.com'));
    await created(input(t, '*@acme-shop.com'));
    // Another account with the same domain name, its route made last.
    const rival = await tenant(ctx.store, 'acme-shop.com');
    await created(input(rival, 'rival@acme-shop.com'));
    await created(input(await tenant(ctx.store, 'other-shop.com'), 'sales@other-shop.com'));
    expect(await oldest('acme-shop.com')).toBe('support@acme-shop.com');
    expect(await oldest('other-shop.com')).toBe('sales@other-shop.com');
    // The domain exactly: not a suffix of it, not a name it is a suffix of.
    for (const d of ['shop.com', 'mail.acme-shop.com', 'nowhere.example.org']) expect(await oldest(d), d).toBeUndefined();
    await ctx.store.inboundRoutes.update(first.id, { enabled: true });
    expect(await oldest('acme-shop.com')).toBe('first@acme-shop.com');
    await ctx.store.inboundRoutes.update(first.id, { enabled: false });
    await ctx.store.inboundRoutes.update(support.id, { url: 'https://other.example.org/' });
    expect(await oldest('acme-shop.com')).toBe('support@acme-shop.com');
    await ctx.store.inboundRoutes.delete(support.id);
    expect(await oldest('acme-shop.com')).toBe('*@acme-shop.com');
    // The account's channel goes with its routes: the rival's route is the domain's oldest left.
    await ctx.store.channels.delete(t.channelId);
    expect(await ctx.store.inboundRoutes.oldestEnabledOnDomain('acme-shop.com')).toMatchObject({ address: 'rival@acme-shop.com', accountId: rival.accountId, enabled: true });
    await ctx.store.domains.delete(rival.domainId);
    expect(await oldest('acme-shop.com')).toBeUndefined();
    expect(await (await ctx.reopen()).inboundRoutes.oldestEnabledOnDomain('other-shop.com').then((r) => r?.address)).toBe('sales@other-shop.com');
  });

  it("refuses an address any account routes already, and a domain that is not the account's", async () => {
    const t = await tenant(ctx.store);
    await ctx.store.inboundRoutes.create(input(t, 'support@acme-shop.com'));
    const twice = await ctx.store.inboundRoutes.create(input(t, 'support@acme-shop.com')).catch((e: unknown) => e);
    expect(fieldCode(twice, '/address')).toBe('duplicate');
    // Another account registered the same domain name: the address still has one route.
    const rival = await tenant(ctx.store, 'acme-shop.com');
    expect(fieldCode(await ctx.store.inboundRoutes.create(input(rival, 'support@acme-shop.com')).catch((e: unknown) => e), '/address')).toBe('duplicate');
    const foreignDomain = await ctx.store.inboundRoutes.create(input({ ...t, domainId: rival.domainId }, 'sales@acme-shop.com')).catch((e: unknown) => e);
    expect(fieldCode(foreignDomain, '/address')).toBe('unknown_domain');
    const foreignChannel = await ctx.store.inboundRoutes.create(input({ ...t, channelId: rival.channelId }, 'sales@acme-shop.com')).catch((e: unknown) => e);
    expect(codeOf(foreignChannel)).toBe('channel_not_found');
  });

  it('removes the routes of a deleted channel and of a deleted domain in their delete', async () => {
    const t = await tenant(ctx.store);
    const other = await tenant(ctx.store, 'other-shop.com');
    const onChannel = (await ctx.store.inboundRoutes.create(input(t, 'support@acme-shop.com'))).route;
    const onDomain = (await ctx.store.inboundRoutes.create(input(other, '*@other-shop.com'))).route;
    expect(await ctx.store.channels.delete(t.channelId)).toBe(true);
    expect(await ctx.store.inboundRoutes.get(onChannel.id)).toBeUndefined();
    expect(await ctx.store.inboundRoutes.match('support@acme-shop.com')).toBeUndefined();
    expect(await ctx.store.domains.delete(other.domainId)).toBe(true);
    expect(await ctx.store.inboundRoutes.get(onDomain.id)).toBeUndefined();
    expect(await ctx.store.inboundRoutes.signingKey(onDomain.id)).toBeNull();
    expect((await ctx.store.inboundRoutes.list({ accountId: other.accountId, limit: 10, offset: 0 })).totalCount).toBe(0);
    const gone = await ctx.store.inboundRoutes.create(input(other, 'sales@other-shop.com')).catch((e: unknown) => e);
    expect(fieldCode(gone, '/address')).toBe('unknown_domain');
  });

  it('keeps the per-account limit and one route per address under concurrent creates', async () => {
    const t = await tenant(ctx.store);
    const limited = await Promise.allSettled(Array.from({ length: 6 }, (_, i) => ctx.store.inboundRoutes.create(input(t, `r${i}@acme-shop.com`, { maxPerAccount: 3 }))));
    expect(limited.filter((s) => s.status === 'fulfilled')).toHaveLength(3);
    expect(limited.flatMap((s) => (s.status === 'rejected' ? [codeOf(s.reason)] : []))).toEqual(Array(3).fill('resource_limit_exceeded'));
    const rival = await tenant(ctx.store, 'acme-shop.com');
    const same = await Promise.allSettled([t, rival, t, rival].map((who) => ctx.store.inboundRoutes.create(input(who, 'same@acme-shop.com'))));
    expect(same.filter((s) => s.status === 'fulfilled')).toHaveLength(1);
    expect(same.flatMap((s) => (s.status === 'rejected' ? [fieldCode(s.reason, '/address')] : []))).toEqual(Array(3).fill('duplicate'));
  });

  it('keeps routes across a restart', async () => {
    const t = await tenant(ctx.store);
    const { route, signingKey } = await ctx.store.inboundRoutes.create(input(t, '*@acme-shop.com'));
    const store = await ctx.reopen();
    expect(await store.inboundRoutes.get(route.id)).toEqual(route);
    expect(await store.inboundRoutes.signingKey(route.id)).toBe(signingKey);
    expect((await store.inboundRoutes.match('x+1@acme-shop.com'))?.route.id).toBe(route.id);
  });
});
