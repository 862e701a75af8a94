/**
 * PostgreSQL's text and jsonb cannot hold U+0000, which LMDB stores as any other character. A
 * value that carries one (an SMTP-submitted Subject, a rendered html part, a user name) must
 * not turn every try of its write into an error: the engine's client sends U+FFFD in its place
 * (store/postgres/client.ts), in text columns and in json documents alike, and keeps an
 * escaped "\u0000" written by the user as the six characters it is.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PostgresStore } from '../../src/store/postgres/engine.js';

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
