/**
 * Group commit on PostgreSQL (store/postgres/submission-group.ts): submissions that arrive while
 * a commit runs share the next transaction, so 40 concurrent sends take a handful of commits,
 * not 40 (an event row's xmin names the transaction that appended it: the events of a batch are
 * appended by the transaction itself, each submission's other rows in its savepoint's
 * subtransaction); a submission that breaks a rule
 * inside a shared transaction is refused alone, with its own error, and leaves nothing, while
 * the others of its batch commit.
 */
import { randomBytes } from 'node:crypto';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PostgresStore } from '../../src/store/postgres/engine.js';
import { accepted, ACCOUNT, idempotencyRecord } from '../store-contract/submissions.js';

const url = process.env.POSTRIDER_TEST_PG_URL;
if (!url) throw new Error('POSTRIDER_TEST_PG_URL is not set: run the PostgreSQL tests with npm run test:pg');

describe('group commit of submissions (PostgreSQL)', () => {
  const schema = `group_${randomBytes(5).toString('hex')}`;
  let store: PostgresStore;
  let admin: postgres.Sql;

  beforeAll(async () => {
    store = new PostgresStore({ url, schema, poolSize: 4 });
    await store.start();
    admin = postgres(url, { max: 1, onnotice: false });
  });

  afterAll(async () => {
    await store.stop();
    await admin.unsafe(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await admin.end({ timeout: 5 });
  });

  it('commits 40 concurrent submissions in a few shared transactions, each with its events', async () => {
    const messages = Array.from({ length: 40 }, () => accepted({ sandbox: true }));
    await Promise.all(messages.map((m) => store.messages.commit({ messages: [m] })));
    const ids = messages.map((m) => m.record.id);
    const [row] = await admin.unsafe<{ txs: string }[]>(`SELECT count(DISTINCT xmin::text) AS txs FROM "${schema}".events WHERE message_id = ANY($1)`, [ids]);
    expect(Number(row!.txs)).toBeLessThanOrEqual(5);
    for (const id of ids) expect((await store.events.ofMessage(id)).map((e) => e.eventType)).toContain('accepted');
  });

  it('writes the plain sends of a batch together with the ones whose rule passed, and none of a refused one', async () => {
    const idempotency = { accountId: ACCOUNT, key: 'group-k1', record: idempotencyRecord(Date.now()) };
    const keyed = [accepted({ sandbox: true }), accepted({ sandbox: true })];
    const plain = Array.from({ length: 4 }, () => accepted({ sandbox: true }));
    const settled = await Promise.allSettled([
      ...keyed.map((m) => store.messages.commit({ messages: [m], idempotency })),
      ...plain.map((m) => store.messages.commit({ messages: [m] })),
    ]);
    expect(settled.slice(0, 2).filter((s) => s.status === 'fulfilled')).toHaveLength(1);
    expect(settled.slice(2).every((s) => s.status === 'fulfilled')).toBe(true);
    const stored = await Promise.all([...keyed, ...plain].map((m) => store.messages.get(m.record.id)));
    settled.forEach((s, i) => expect(stored[i] !== undefined, `message ${i}`).toBe(s.status === 'fulfilled'));
  });

  it('refuses the one submission past the send quota in a shared transaction, alone', async () => {
    const sendLimit = { accountId: `${ACCOUNT}-pending`, limit: 3 };
    const messages = Array.from({ length: 6 }, () => accepted({ accountId: sendLimit.accountId, sandbox: true }));
    const settled = await Promise.allSettled(messages.map((m) => store.messages.commit({ messages: [m], sendLimit })));
    expect(settled.filter((s) => s.status === 'fulfilled')).toHaveLength(3);
    for (const s of settled.filter((x) => x.status === 'rejected')) expect((s as PromiseRejectedResult).reason).toMatchObject({ code: 'send_limit_exceeded' });
    const stored = await Promise.all(messages.map((m) => store.messages.get(m.record.id)));
    const events = await Promise.all(messages.map((m) => store.events.ofMessage(m.record.id)));
    settled.forEach((s, i) => {
      expect(stored[i] !== undefined, `message ${i}`).toBe(s.status === 'fulfilled');
      expect(events[i]!.length > 0, `events of message ${i}`).toBe(s.status === 'fulfilled');
    });
  });
});
