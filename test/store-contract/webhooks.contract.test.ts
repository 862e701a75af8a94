/**
 * WebhooksPort and WebhookOutboxPort (store/port/webhooks.ts): webhook records with their keys
 * and the per-account limit, which holds under concurrent creates; the outbox filled by events,
 * claimed per webhook up to its free slots, in order per message, never handed to two claimers
 * at once, and emptied by the attempts recorded.
 */
import { randomUUID } from 'node:crypto';
import { expect, it } from 'vitest';
import type { EventType } from '../../src/domain/types.js';
import type { OutboxEntry } from '../../src/domain/webhook.js';
import type { StorePort } from '../../src/store/port/index.js';
import type { ClaimRequest, NewWebhookInput } from '../../src/store/port/webhooks.js';
import { eachEngine } from './engines.js';

function input(accountId: string, o: Partial<NewWebhookInput> = {}): NewWebhookInput {
  return { accountId, channelId: null, url: 'https://hooks.example.org/in', events: ['opened'], enabled: true, additionalHeaders: [], maxPerAccount: 10, ...o };
}

/** An `opened` event of one recipient: one outbox entry per webhook that wants it. */
async function emit(store: StorePort, e: { accountId: string; channelId?: string; messageId?: string; type?: EventType }): Promise<void> {
  const subject = { accountId: e.accountId, channelId: e.channelId ?? randomUUID(), messageId: e.messageId ?? randomUUID(), mailType: 'transactional' as const, mailSource: 'api' as const, subject: 's', tags: [], metadata: {} };
  await store.engagement.recordLinkEvent((e.type ?? 'opened') as 'opened' | 'clicked', { subject, recipients: ['ann@example.org'], details: {} });
}

/** Claims at a time well after every entry so far was due. */
function claim(store: StorePort, o: Partial<ClaimRequest> & { slots?: number } = {}) {
  return store.webhookOutbox.claimDue({ nowMs: Date.now() + 1, max: 100, freeSlots: { default: o.slots ?? 100, byWebhook: {} }, ...o });
}

const ok = (entry: OutboxEntry) => ({ entry, atMs: Date.now(), statusCode: 200, error: null });

eachEngine('webhooks', (ctx) => {
  const account = randomUUID();

  it('creates a webhook with a signing key, readable by id, with zero counters', async () => {
    const { webhook, signingKey } = await ctx.store.webhooks.create(input(account, { additionalHeaders: [{ name: 'X-Token', value: 't' }] }));
    expect(webhook).toEqual({ id: expect.any(String), accountId: account, channelId: null, url: 'https://hooks.example.org/in', events: ['opened'], enabled: true, additionalHeaders: [{ name: 'X-Token', value: 't' }], createdAt: expect.any(String), updatedAt: webhook.createdAt });
    expect(signingKey).toMatch(/^whsec_/);
    expect(await ctx.store.webhooks.get(webhook.id)).toEqual(webhook);
    expect(await ctx.store.webhooks.signingKey(webhook.id)).toBe(signingKey);
    expect(await ctx.store.webhooks.status(webhook.id)).toEqual({ lastResponse: null, succeeded: 0, failedAttempts: 0, failed: 0, consecutiveFailures: 0 });
    expect(await ctx.store.webhookOutbox.pendingCount(webhook.id)).toBe(0);
  });

  it('answers not found for an unknown webhook in every verb', async () => {
    const id = randomUUID();
    expect(await ctx.store.webhooks.get(id)).toBeUndefined();
    expect(await ctx.store.webhooks.signingKey(id)).toBeNull();
    expect(await ctx.store.webhooks.update(id, { url: 'https://x.example.org/' })).toBeUndefined();
    expect(await ctx.store.webhooks.regenerateSigningKey(id)).toBeUndefined();
    expect(await ctx.store.webhooks.delete(id)).toBe(false);
    expect(await ctx.store.webhookOutbox.pendingCount(id)).toBe(0);
  });

  it('lists an account\'s webhooks in creation order, paged, filtered by bound channel', async () => {
    const [c1, c2] = [randomUUID(), randomUUID()];
    const made = [];
    for (const channelId of [c1, null, c2, c1]) made.push((await ctx.store.webhooks.create(input(account, { channelId }))).webhook);
    // Creation order is the creation time, then the id for webhooks made in the same millisecond.
    const byCreation = [...made].sort((a, b) => a.createdAt.localeCompare(b.createdAt) || (a.id < b.id ? -1 : 1));
    const created = byCreation.map((w) => w.id);
    const boundToC1 = byCreation.filter((w) => w.channelId === c1).map((w) => w.id);
    await ctx.store.webhooks.create(input(randomUUID()));
    const all = await ctx.store.webhooks.list({ accountId: account, limit: 10, offset: 0 });
    expect([all.totalCount, all.results.map((w) => w.id)]).toEqual([4, created]);
    expect((await ctx.store.webhooks.list({ accountId: account, limit: 2, offset: 1 })).results.map((w) => w.id)).toEqual(created.slice(1, 3));
    const bound = await ctx.store.webhooks.list({ accountId: account, channelIds: [c1], limit: 10, offset: 0 });
    expect([bound.totalCount, bound.results.map((w) => w.id)]).toEqual([2, boundToC1]);
  });

  it('updates the fields given, leaves the others, and keeps channelId unless given (null: every channel)', async () => {
    const channelId = randomUUID();
    const { webhook } = await ctx.store.webhooks.create(input(account, { channelId }));
    const next = await ctx.store.webhooks.update(webhook.id, { url: 'https://other.example.org/', events: ['clicked', 'opened'] });
    expect(next).toMatchObject({ url: 'https://other.example.org/', events: ['clicked', 'opened'], channelId, enabled: true, createdAt: webhook.createdAt });
    expect((await ctx.store.webhooks.update(webhook.id, { channelId: null }))?.channelId).toBeNull();
    expect(await ctx.store.webhooks.get(webhook.id)).toMatchObject({ url: 'https://other.example.org/', channelId: null });
  });

  it('replaces the signing key at once', async () => {
    const { webhook, signingKey } = await ctx.store.webhooks.create(input(account));
    const regenerated = await ctx.store.webhooks.regenerateSigningKey(webhook.id);
    expect(regenerated?.signingKey).toMatch(/^whsec_/);
    expect(regenerated?.signingKey).not.toBe(signingKey);
    expect(await ctx.store.webhooks.signingKey(webhook.id)).toBe(regenerated?.signingKey);
  });

  it('deletes a webhook with its key and its outbox, once', async () => {
    const { webhook } = await ctx.store.webhooks.create(input(account));
    await emit(ctx.store, { accountId: account });
    expect(await ctx.store.webhooks.delete(webhook.id)).toBe(true);
    expect(await ctx.store.webhooks.delete(webhook.id)).toBe(false);
    expect(await ctx.store.webhooks.get(webhook.id)).toBeUndefined();
    expect(await ctx.store.webhooks.signingKey(webhook.id)).toBeNull();
    expect(await ctx.store.webhookOutbox.pendingCount(webhook.id)).toBe(0);
    expect((await claim(ctx.store)).claims).toEqual([]);
  });

  it('refuses a webhook beyond the account\'s limit, another account\'s count aside', async () => {
    const { webhook } = await ctx.store.webhooks.create(input(account, { maxPerAccount: 2 }));
    await ctx.store.webhooks.create(input(account, { maxPerAccount: 2 }));
    await expect(ctx.store.webhooks.create(input(account, { maxPerAccount: 2 }))).rejects.toMatchObject({ code: 'resource_limit_exceeded' });
    await expect(ctx.store.webhooks.create(input(randomUUID(), { maxPerAccount: 2 }))).resolves.toBeDefined();
    await ctx.store.webhooks.delete(webhook.id);
    await expect(ctx.store.webhooks.create(input(account, { maxPerAccount: 2 }))).resolves.toBeDefined();
  });

  it('never passes the limit when creates race: the losers get resource_limit_exceeded', async () => {
    const results = await Promise.allSettled(Array.from({ length: 8 }, () => ctx.store.webhooks.create(input(account, { maxPerAccount: 3 }))));
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(3);
    for (const r of results.filter((x) => x.status === 'rejected')) expect((r as PromiseRejectedResult).reason).toMatchObject({ code: 'resource_limit_exceeded' });
    expect((await ctx.store.webhooks.list({ accountId: account, limit: 100, offset: 0 })).totalCount).toBe(3);
  });

  it('queues an event for every enabled webhook of the account that wants it, from the first webhook on', async () => {
    await emit(ctx.store, { accountId: account }); // no webhook yet: nothing queued (and remembered so)
    const wants = (await ctx.store.webhooks.create(input(account))).webhook;
    const other = (await ctx.store.webhooks.create(input(account, { events: ['clicked'] }))).webhook;
    const disabled = (await ctx.store.webhooks.create(input(account, { enabled: false }))).webhook;
    await emit(ctx.store, { accountId: account });
    await emit(ctx.store, { accountId: randomUUID() });
    expect(await ctx.store.webhookOutbox.pendingCount(wants.id)).toBe(1);
    expect(await ctx.store.webhookOutbox.pendingCount(other.id)).toBe(0);
    expect(await ctx.store.webhookOutbox.pendingCount(disabled.id)).toBe(0);
  });

  it('claims a due entry with its webhook and key, and records a success', async () => {
    const { webhook, signingKey } = await ctx.store.webhooks.create(input(account));
    await emit(ctx.store, { accountId: account });
    const { claims } = await claim(ctx.store);
    expect(claims).toHaveLength(1);
    expect(claims[0]).toMatchObject({ webhook: { id: webhook.id }, secret: signingKey, entry: { webhookId: webhook.id, attempts: 0, payload: { eventType: 'opened', recipient: 'ann@example.org' } } });
    expect(await ctx.store.webhookOutbox.recordAttempt(ok(claims[0].entry))).toBe('done');
    expect(await ctx.store.webhookOutbox.pendingCount(webhook.id)).toBe(0);
    expect(await ctx.store.webhooks.status(webhook.id)).toMatchObject({ succeeded: 1, consecutiveFailures: 0, lastEvent: 'opened', lastResponse: { statusCode: 200, error: null } });
    expect((await claim(ctx.store)).claims).toEqual([]);
  });

  it('does not claim an entry before it is due, and says when the next one is', async () => {
    await ctx.store.webhooks.create(input(account));
    const before = Date.now();
    await emit(ctx.store, { accountId: account });
    const early = await claim(ctx.store, { nowMs: before - 60_000 });
    expect(early.claims).toEqual([]);
    expect(early.nextDueMs).toBeGreaterThanOrEqual(before);
    expect((await claim(ctx.store)).nextDueMs).toBeUndefined();
  });

  it('reschedules a failed attempt, then gives it up, counting both', async () => {
    const { webhook } = await ctx.store.webhooks.create(input(account));
    await emit(ctx.store, { accountId: account });
    const first = (await claim(ctx.store)).claims[0].entry;
    const retryAtMs = Date.now() + 3_600_000;
    expect(await ctx.store.webhookOutbox.recordAttempt({ entry: first, atMs: Date.now(), statusCode: 500, error: 'HTTP 500', retryAtMs })).toBe('retry');
    const waiting = await claim(ctx.store);
    expect([waiting.claims, waiting.nextDueMs]).toEqual([[], retryAtMs]);
    const second = (await claim(ctx.store, { nowMs: retryAtMs })).claims[0].entry;
    expect([second.id, second.attempts]).toEqual([first.id, 1]);
    expect(await ctx.store.webhookOutbox.recordAttempt({ entry: second, atMs: Date.now(), statusCode: null, error: 'timeout' })).toBe('dropped');
    expect(await ctx.store.webhookOutbox.pendingCount(webhook.id)).toBe(0);
    expect(await ctx.store.webhooks.status(webhook.id)).toMatchObject({ succeeded: 0, failedAttempts: 2, failed: 1, consecutiveFailures: 2, lastResponse: { statusCode: null, error: 'timeout' } });
  });

  it('hands a message\'s events to a webhook one at a time, in order', async () => {
    await ctx.store.webhooks.create(input(account, { events: ['opened', 'clicked'] }));
    const messageId = randomUUID();
    await emit(ctx.store, { accountId: account, messageId, type: 'opened' });
    await emit(ctx.store, { accountId: account, messageId, type: 'clicked' });
    const first = (await claim(ctx.store)).claims;
    expect(first.map((c) => c.entry.payload.eventType)).toEqual(['opened']);
    await ctx.store.webhookOutbox.recordAttempt(ok(first[0].entry));
    expect((await claim(ctx.store)).claims.map((c) => c.entry.payload.eventType)).toEqual(['clicked']);
  });

  it('claims per webhook up to its free slots, and at most max in all', async () => {
    const a = (await ctx.store.webhooks.create(input(account))).webhook;
    const b = (await ctx.store.webhooks.create(input(account))).webhook;
    for (let i = 0; i < 4; i++) await emit(ctx.store, { accountId: account });
    const release = async (r: { claims: { entry: OutboxEntry }[] }) => ctx.store.webhookOutbox.release(r.claims.map((c) => c.entry));
    const per = (id: string, r: { claims: { webhook: { id: string } }[] }) => r.claims.filter((c) => c.webhook.id === id).length;
    const slots = await ctx.store.webhookOutbox.claimDue({ nowMs: Date.now() + 1, max: 100, freeSlots: { default: 1, byWebhook: { [b.id]: 3 } } });
    expect([per(a.id, slots), per(b.id, slots)]).toEqual([1, 3]);
    await release(slots);
    const capped = await claim(ctx.store, { max: 2 });
    expect(capped.claims).toHaveLength(2);
    await release(capped);
    const none = await claim(ctx.store, { freeSlots: { default: 5, byWebhook: { [a.id]: 0 } } });
    expect([per(a.id, none), per(b.id, none)]).toEqual([0, 4]);
  });

  it('gives a released entry back, due again', async () => {
    await ctx.store.webhooks.create(input(account));
    await emit(ctx.store, { accountId: account });
    const [c] = (await claim(ctx.store)).claims;
    expect((await claim(ctx.store)).claims).toEqual([]);
    await ctx.store.webhookOutbox.release([c.entry]);
    expect((await claim(ctx.store)).claims.map((x) => x.entry.id)).toEqual([c.entry.id]);
  });

  it('never gives one entry to two claimers racing', async () => {
    await ctx.store.webhooks.create(input(account));
    await ctx.store.webhooks.create(input(account));
    for (let i = 0; i < 10; i++) await emit(ctx.store, { accountId: account });
    const rounds = await Promise.all(Array.from({ length: 5 }, () => claim(ctx.store, { max: 6 })));
    const ids = rounds.flatMap((r) => r.claims.map((c) => c.entry.id));
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids).toHaveLength(20);
  });

  it('drops what was queued for a webhook when it is disabled; an attempt recorded after that changes nothing', async () => {
    const { webhook } = await ctx.store.webhooks.create(input(account));
    await emit(ctx.store, { accountId: account });
    await emit(ctx.store, { accountId: account });
    const [c] = (await claim(ctx.store, { max: 1 })).claims;
    await ctx.store.webhooks.update(webhook.id, { enabled: false });
    expect(await ctx.store.webhookOutbox.pendingCount(webhook.id)).toBe(0);
    expect(await ctx.store.webhookOutbox.recordAttempt(ok(c.entry))).toBe('gone');
    expect(await ctx.store.webhooks.status(webhook.id)).toMatchObject({ succeeded: 0, lastResponse: null });
  });

  it('posts nothing about a deleted channel to a webhook of every channel', async () => {
    const channel = await ctx.store.channels.create({ accountId: account, name: 'c', deliveryType: 'live', tracking: { links: false, opens: false }, maxPerAccount: 10 });
    const { webhook } = await ctx.store.webhooks.create(input(account));
    await emit(ctx.store, { accountId: account, channelId: channel.id });
    await emit(ctx.store, { accountId: account });
    await ctx.store.channels.delete(channel.id);
    const { claims } = await claim(ctx.store);
    expect(claims.map((c) => c.entry.payload.channelId)).not.toContain(channel.id);
    expect(claims).toHaveLength(1);
    expect(await ctx.store.webhookOutbox.pendingCount(webhook.id)).toBe(1);
  });

  it('keeps the outbox across a restart', async () => {
    const { webhook } = await ctx.store.webhooks.create(input(account));
    await emit(ctx.store, { accountId: account });
    const store = await ctx.reopen();
    expect(await store.webhookOutbox.pendingCount(webhook.id)).toBe(1);
    expect((await claim(store)).claims).toHaveLength(1);
  });
});
