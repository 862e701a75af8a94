/**
 * QueuePort.channelDeleted is the port's synchronous read (store/port/index.ts): on PostgreSQL
 * each node keeps a set, filled from the tombstones at start and by the NOTIFY another node's
 * delete sends in its transaction. A channel deleted through node A is deleted for node B's
 * dispatcher without B touching the database, and a node started later knows it from the start.
 */
import { randomBytes } from 'node:crypto';
import postgres from 'postgres';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { PostgresStore } from '../../src/store/postgres/engine.js';
import { waitFor } from '../support/wait.js';

const url = process.env.POSTRIDER_TEST_PG_URL;
if (!url) throw new Error('POSTRIDER_TEST_PG_URL is not set: run the PostgreSQL tests with npm run test:pg');

describe('deleted channels across nodes (PostgreSQL)', () => {
  const schema = `deleted_${randomBytes(5).toString('hex')}`;
  const open: PostgresStore[] = [];
  const node = async (): Promise<PostgresStore> => {
    const s = new PostgresStore({ url, schema, poolSize: 2 });
    await s.start();
    open.push(s);
    return s;
  };

  afterEach(async () => {
    await Promise.all(open.splice(0).map((s) => s.stop()));
  });

  afterAll(async () => {
    const admin = postgres(url, { max: 1, onnotice: false });
    await admin.unsafe(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await admin.end({ timeout: 5 });
  });

  it('a delete on node A reaches node B by notification, and a node started later reads it from the tombstones', async () => {
    const [a, b] = [await node(), await node()];
    const account = await a.accounts.create({ name: 'acme', state: 'active' });
    const channel = await a.channels.create({ accountId: account.id, name: 'main', deliveryType: 'live', tracking: { links: false, opens: false }, maxPerAccount: 10 });
    expect(b.queue.channelDeleted(channel.id)).toBe(false);

    expect(await a.channels.delete(channel.id)).toBe(true);
    expect(a.queue.channelDeleted(channel.id)).toBe(true);
    await waitFor(() => b.queue.channelDeleted(channel.id), { what: "node B's view of the deletion" });

    const c = await node();
    expect(c.queue.channelDeleted(channel.id)).toBe(true);
  });
});
