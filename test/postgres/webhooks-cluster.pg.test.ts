/**
 * The PostgreSQL engine's webhooks, outbox and idempotency keys with two nodes on one database
 * (two PostgresStores on one schema): what the contract suite cannot show with one process.
 * Outbox claims live in the rows (a lease and a token), so a node that died gives its claims
 * back and its late record is fenced off; the head of a message's entries stays exact when an
 * attempt and a new event of the message commit at once; idempotency claims are rows seen by
 * every node. Tests the engine itself (it reaches its context through pgContextOf).
 */
import { randomBytes, randomUUID } from 'node:crypto';
import postgres from 'postgres';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { EventRecord } from '../../src/domain/types.js';
import { PostgresStore, pgContextOf } from '../../src/store/postgres/engine.js';
import { CLAIM_LEASE_MS } from '../../src/store/postgres/webhook-outbox-claim.js';
import { enqueueWebhookEvents } from '../../src/store/postgres/webhooks-tx.js';
import type { ClaimRequest } from '../../src/store/port/webhooks.js';

const url = process.env.POSTRIDER_TEST_PG_URL;
if (!url) throw new Error('POSTRIDER_TEST_PG_URL is not set: run the PostgreSQL tests with npm run test:pg');

const account = 'acc-1';
let seq = 0;

function event(messageId: string, eventType: EventRecord['eventType'] = 'opened'): EventRecord {
  return { seq: ++seq, accountId: account, channelId: 'ch-1', messageId, mailType: 'transactional', mailSource: 'api', eventType, timestamp: new Date().toISOString(), subject: 's', recipients: ['ann@example.org'], tags: [], metadata: {}, details: {} };
}

/** What appendEvents does for the outbox: the events' entries in one transaction. */
async function append(store: PostgresStore, events: EventRecord[]): Promise<void> {
  await pgContextOf(store).begin((tx) => enqueueWebhookEvents(tx, events));
}

const claimAt = (nowMs: number, o: Partial<ClaimRequest> = {}): ClaimRequest => ({ nowMs, max: 100, freeSlots: { default: 100, byWebhook: {} }, ...o });

describe('PostgreSQL webhooks and idempotency across two nodes', () => {
  let admin: postgres.Sql;
  let schema: string;
  let a: PostgresStore;
  let b: PostgresStore;

  beforeAll(() => {
    admin = postgres(url, { max: 1, onnotice: false });
  });
  afterAll(async () => {
    await admin.end({ timeout: 5 });
  });
  beforeEach(async () => {
    schema = `whc_${randomBytes(5).toString('hex')}`;
    a = new PostgresStore({ url, schema, poolSize: 4 });
    b = new PostgresStore({ url, schema, poolSize: 4 });
    await a.start();
    await b.start();
  });
  afterEach(async () => {
    await Promise.all([a.stop(), b.stop()]);
    await admin.unsafe(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  });

  it('gives a claim another node held back when its lease ends, and fences off that node\'s late record', async () => {
    const { webhook } = await a.webhooks.create({ accountId: account, channelId: null, url: 'https://h.example.org/', events: ['opened'], enabled: true, additionalHeaders: [], maxPerAccount: 5 });
    await append(a, [event(randomUUID())]);
    const now = Date.now() + 1;
    const [held] = (await a.webhookOutbox.claimDue(claimAt(now))).claims;
    expect((await b.webhookOutbox.claimDue(claimAt(now + CLAIM_LEASE_MS - 1))).claims).toEqual([]);
    const [again] = (await b.webhookOutbox.claimDue(claimAt(now + CLAIM_LEASE_MS))).claims;
    expect(again.entry.id).toBe(held.entry.id);
    expect(await a.webhookOutbox.recordAttempt({ entry: held.entry, atMs: now, statusCode: 200, error: null })).toBe('gone');
    await a.webhookOutbox.release([held.entry]); // the lapsed claim's release leaves b's claim alone
    expect((await a.webhookOutbox.claimDue(claimAt(now + CLAIM_LEASE_MS))).claims).toEqual([]);
    expect(await b.webhookOutbox.recordAttempt({ entry: again.entry, atMs: now, statusCode: 200, error: null })).toBe('done');
    expect(await a.webhooks.status(webhook.id)).toMatchObject({ succeeded: 1 });
  });

  it('never gives one entry to claimers of two nodes racing, and leaves none behind that another could take', async () => {
    for (let i = 0; i < 2; i++) await a.webhooks.create({ accountId: account, channelId: null, url: 'https://h.example.org/', events: ['opened'], enabled: true, additionalHeaders: [], maxPerAccount: 5 });
    await append(a, Array.from({ length: 15 }, () => event(randomUUID())));
    const now = Date.now() + 1;
    const rounds = await Promise.all([a, b, a, b, a, b].map((s) => s.webhookOutbox.claimDue(claimAt(now, { max: 7 }))));
    const ids = rounds.flatMap((r) => r.claims.map((c) => c.entry.id));
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids).toHaveLength(30);
  });

  it('keeps one due entry per message when an attempt and a new event of the message commit at once', async () => {
    await a.webhooks.create({ accountId: account, channelId: null, url: 'https://h.example.org/', events: ['opened', 'clicked'], enabled: true, additionalHeaders: [], maxPerAccount: 5 });
    const messages = Array.from({ length: 12 }, () => randomUUID());
    await append(a, messages.map((m) => event(m, 'opened')));
    const now = Date.now() + 1;
    const first = (await a.webhookOutbox.claimDue(claimAt(now))).claims;
    expect(first).toHaveLength(12);
    // Node a records each head while node b appends the message's next event.
    await Promise.all(first.flatMap((c) => [a.webhookOutbox.recordAttempt({ entry: c.entry, atMs: now, statusCode: 200, error: null }), append(b, [event(c.entry.messageId, 'clicked')])]));
    const next = (await b.webhookOutbox.claimDue(claimAt(Date.now() + 1))).claims;
    expect(next.map((c) => c.entry.payload.eventType)).toEqual(Array(12).fill('clicked'));
    expect(new Set(next.map((c) => c.entry.messageId))).toEqual(new Set(messages));
  });

  it('shows a key claimed on one node as busy on the other, until released there', async () => {
    const key = { accountId: account, key: 'k' };
    const held = await a.idempotency.claim({ ...key, nowMs: Date.now(), leaseMs: 60_000 });
    expect(held.status).toBe('claimed');
    expect(await b.idempotency.claim({ ...key, nowMs: Date.now(), leaseMs: 60_000 })).toEqual({ status: 'busy' });
    let settled = false;
    const waiting = b.idempotency.settled(key).then(() => (settled = true));
    await new Promise((r) => setTimeout(r, 120));
    expect(settled).toBe(false);
    if (held.status === 'claimed') await a.idempotency.release(held.claim);
    await waiting;
    expect((await b.idempotency.claim({ ...key, nowMs: Date.now(), leaseMs: 60_000 })).status).toBe('claimed');
  });

  it('lets another node take a key whose claim\'s lease ended (its node died)', async () => {
    const key = { accountId: account, key: 'k' };
    const nowMs = Date.now();
    expect((await a.idempotency.claim({ ...key, nowMs, leaseMs: 1_000 })).status).toBe('claimed');
    expect((await b.idempotency.claim({ ...key, nowMs: nowMs + 999, leaseMs: 1_000 })).status).toBe('busy');
    const taken = await b.idempotency.claim({ ...key, nowMs: nowMs + 1_000, leaseMs: 1_000 });
    expect(taken.status).toBe('claimed');
  });
});
