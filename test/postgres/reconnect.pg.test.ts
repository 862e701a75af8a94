/**
 * After an outage of PostgreSQL, the store's pool and the coordination's serve again within a
 * second or two of the server accepting connections (domain/database-unavailable.ts,
 * reconnectBackoff), not after postgres.js's own backoff, which grows to 20 s and meanwhile
 * fails every query at once with the last connection error: the cluster test measured nodes
 * answering 503 for 7 s after a 3 s outage. Queries run all through the outage, as a node's
 * traffic does, so the driver counts many failed attempts.
 *
 * Its own PostgreSQL (test/support/postgres.ts), to crash and start again.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PostgresCoordination } from '../../src/coordination/postgres/index.js';
import { PostgresStore } from '../../src/store/postgres/engine.js';
import { startPostgres, type PostgresCluster } from '../support/postgres.js';
import { waitFor } from '../support/wait.js';

/**
 * Long enough that postgres.js's own curve would make its 8th attempt no sooner than 15.5 s after
 * the first failure (0.5 × (3 + 9 + … + 729) / 100 s, then at least 10 s), 3 s after the server
 * is back: without the cap this test fails, with it the wait is a second at most.
 */
const OUTAGE_MS = 12_000;

describe('reconnecting after PostgreSQL was down', () => {
  let pg: PostgresCluster;
  let store: PostgresStore;
  let coordination: PostgresCoordination;

  beforeAll(async () => {
    pg = await startPostgres();
    store = new PostgresStore({ url: pg.url, schema: 'reconnect', poolSize: 4 });
    await store.start();
    coordination = new PostgresCoordination({ url: pg.url, schema: 'reconnect', nodeId: 'node-1', poolSize: 2 });
    await coordination.start();
  }, 60_000);

  afterAll(async () => {
    await coordination?.stop();
    await store?.stop();
    await pg?.stop();
  });

  it('serves within two seconds of the server accepting connections again', async () => {
    const limit = coordination.keyedRate('reconnect', { limit: 1_000_000, windowMs: 1000 });
    const storeUp = () => store.apiKeys.findByToken('pr_none').then(() => true, () => false);
    const coordinationUp = () => limit.take('k').then(() => true, () => false);
    expect(await storeUp()).toBe(true);
    expect(await coordinationUp()).toBe(true);

    await pg.crash();
    let down = true;
    const traffic = (async () => {
      while (down) {
        await Promise.all([storeUp(), coordinationUp()]);
        await new Promise((r) => setTimeout(r, 50));
      }
    })();
    await waitFor(async () => !(await storeUp()) && !(await coordinationUp()), { what: 'the store and the coordination to fail' });
    await new Promise((r) => setTimeout(r, OUTAGE_MS)); // the outage itself: queries fail all along
    await pg.start();
    const back = performance.now();
    try {
      await waitFor(storeUp, { what: 'the store to serve again', timeout: 2_000 });
      await waitFor(coordinationUp, { what: 'the coordination to serve again', timeout: Math.max(100, 2_000 - (performance.now() - back)) });
    } finally {
      down = false;
      await traffic;
    }
  }, 60_000);
});
