/**
 * In cluster mode the store engine itself wakes the webhook dispatchers: the transaction that
 * enqueues outbox entries sends NOTIFY 'outbox' on the coordination's channel
 * (domain/wake-channel.ts), delivered when it commits. Every node's PostgresCoordination hears
 * it, the committing node's too (the store is not the coordination instance that woke).
 */
import { randomBytes, randomUUID } from 'node:crypto';
import postgres from 'postgres';
import { afterAll, describe, expect, it } from 'vitest';
import { PostgresCoordination } from '../../src/coordination/postgres/index.js';
import { PostgresStore } from '../../src/store/postgres/engine.js';
import { waitFor } from '../support/wait.js';

const url = process.env.POSTRIDER_TEST_PG_URL;
if (!url) throw new Error('POSTRIDER_TEST_PG_URL is not set: run the PostgreSQL tests with npm run test:pg');

describe('outbox wake-ups from the committing transaction (PostgreSQL)', () => {
  const schema = `outboxwake_${randomBytes(5).toString('hex')}`;

  afterAll(async () => {
    const admin = postgres(url, { max: 1, onnotice: false });
    await admin.unsafe(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await admin.end({ timeout: 5 });
  });

  it("an event for a webhook wakes both nodes' outbox listeners; an event nobody subscribed to wakes none", async () => {
    const store = new PostgresStore({ url, schema, poolSize: 2 });
    await store.start();
    const nodes = ['node-a', 'node-b'].map((n) => new PostgresCoordination({ url, schema, nodeId: `${n}-${randomBytes(4).toString('hex')}` }));
    await Promise.all(nodes.map((n) => n.start()));
    const woken = [0, 0];
    nodes.forEach((n, i) => n.onWake('outbox', () => woken[i]!++));
    try {
      const accountId = randomUUID();
      await store.webhooks.create({ accountId, channelId: null, url: 'https://hooks.example.org/in', events: ['opened'], enabled: true, additionalHeaders: [], maxPerAccount: 10 });
      const subject = (account: string) => ({ accountId: account, channelId: randomUUID(), messageId: randomUUID(), mailType: 'transactional' as const, mailSource: 'api' as const, subject: 's', tags: [], metadata: {} });

      // An account without webhooks first: no entry, no notification (checked after the second wakes).
      await store.engagement.recordLinkEvent('opened', { subject: subject(randomUUID()), recipients: ['ann@example.org'], details: {} });
      await store.engagement.recordLinkEvent('opened', { subject: subject(accountId), recipients: ['ann@example.org'], details: {} });
      await waitFor(() => woken[0]! >= 1 && woken[1]! >= 1, { what: 'both nodes woken for the outbox' });
      expect(woken).toEqual([1, 1]);
    } finally {
      await Promise.all(nodes.map((n) => n.stop()));
      await store.stop();
    }
  });
});
