/**
 * PostgreSQL's text and jsonb cannot hold U+0000, which LMDB stores as any other character. A
 * value that carries one (an SMTP-submitted Subject, a rendered html part, a user name) must
 * not turn every try of its write into an error: the engine's client sends U+FFFD in its place
 * (store/postgres/client.ts), in text columns and in json documents alike, and keeps an
 * escaped "\u0000" written by the user as the six characters it is. The coordination's keys can
 * carry one from a client too (a path parameter of DELETE /ops/sources/{source}/shaping/{site}:
 * the PostgreSQL HTTP fuzz found the 500), and its connections replace it the same way
 * (coordination/postgres/connection.ts), on top of the keyed limits' own encoding.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PostgresStore } from '../../src/store/postgres/engine.js';
import { PgCluster } from '../support/pg-coordination.js';

const url = process.env.POSTRIDER_TEST_PG_URL;
if (!url) throw new Error('POSTRIDER_TEST_PG_URL is not set: run the PostgreSQL tests with npm run test:pg');

describe('NUL characters on PostgreSQL', () => {
  const schema = `nul_${randomBytes(5).toString('hex')}`;
  let store: PostgresStore;

  beforeAll(async () => {
    store = new PostgresStore({ url, schema, poolSize: 2 });
    await store.start();
  });

  afterAll(async () => {
    await store.stop();
    const admin = postgres(url, { max: 1, onnotice: false });
    await admin.unsafe(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await admin.end({ timeout: 5 });
  });

  it('stores a text column value with NUL as U+FFFD', async () => {
    const account = await store.accounts.create({ name: 'ac\u0000me', state: 'active' });
    expect((await store.accounts.get(account.id))?.name).toBe('ac\ufffdme');
  });

  it('stores json documents with NUL as U+FFFD, and a written backslash-u0000 as it is', async () => {
    const messageId = randomUUID();
    const subject = { accountId: randomUUID(), channelId: randomUUID(), messageId, mailType: 'transactional' as const, mailSource: 'smtp' as const, subject: 'Re\u0000: \\u0000', tags: [], metadata: {} };
    await store.engagement.recordLinkEvent('opened', { subject, recipients: ['ann@example.org'], details: {} });
    const [event] = await store.events.ofMessage(messageId);
    expect(event?.subject).toBe('Re\ufffd: \\u0000');
  });
});

describe('NUL characters in the PostgreSQL coordination', () => {
  let cluster: PgCluster;
  beforeAll(() => {
    cluster = new PgCluster();
  });
  afterAll(async () => {
    await cluster.dispose();
  });

  it('counts, lists and deletes keys that carry NUL', async () => {
    const node = await cluster.node(cluster.freshSchema());
    const failures = node.failures('smtp-auth-users', { limit: 2, windowMs: 60_000 });
    const key = '127.0.0.1\u0000ann\u0000';
    await failures.add(key);
    await failures.add(key);
    expect(await failures.reached(key)).toBe(true);
    await failures.clear(key);
    expect(await failures.reached(key)).toBe(false);

    const entries = node.entries('source-shaping');
    const now = Date.now();
    await entries.set('a\u0000\nsite', 'v\u0000', now + 60_000);
    expect(await entries.list(now)).toEqual([{ key: 'a\ufffd\nsite', value: 'v\ufffd', until: now + 60_000 }]);
    expect(await entries.delete('\u0000\nsite', now)).toBe(false);
    expect(await entries.delete('a\u0000\nsite', now)).toBe(true);

    expect((await node.keyedRate('keys', { limit: 1, windowMs: 60_000 }).take('k\u0000')).allowed).toBe(true);
    const hold = await node.slots('sites').acquire('mx\u0000.example.org', 1);
    expect(hold).not.toBeNull();
    expect(await node.slots('sites').held('mx\u0000.example.org')).toBe(1);
    await hold!.release();
    expect((await node.counters('warmup').add([{ key: 'src\u0000site', cap: 1, ttlMs: 60_000 }])).added).toBe(true);
  });

  it('takes from a shared rate whose name carries NUL (the bridge sends it replaced)', async () => {
    const errors: unknown[] = [];
    const node = await cluster.node(cluster.freshSchema(), undefined, { onError: (err: unknown) => errors.push(err) });
    const rate = node.rate('site\u0000', { perSecond: 5, burst: 3 });
    expect(rate.tryTake(5)).toBe(3);
    expect(errors).toEqual([]);
  });
});
