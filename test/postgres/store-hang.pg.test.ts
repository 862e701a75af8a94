/**
 * GET /ready's view of the PostgreSQL store (PostgresStore.healthy) when the server hangs: the
 * connections stay open and nothing answers, as with a hung server or a network that drops
 * packets. The probe's query then waited with no error, and healthy() stayed true: every node
 * answered /ready 200 while its sends hung (a load balancer kept them all in). A probe without
 * an answer within PROBE_TIMEOUT_MS now counts as a failed one; the next answer makes the store
 * healthy again.
 *
 * Its own PostgreSQL (test/support/postgres.ts), to freeze and let run again.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PostgresStore, PROBE_TIMEOUT_MS } from '../../src/store/postgres/engine.js';
import { startPostgres, type PostgresCluster } from '../support/postgres.js';
import { waitFor } from '../support/wait.js';

describe('the PostgreSQL store when the server hangs', () => {
  let pg: PostgresCluster;
  let store: PostgresStore;

  beforeAll(async () => {
    pg = await startPostgres();
    store = new PostgresStore({ url: pg.url, schema: 'store_hang', poolSize: 2 });
    await store.start();
  }, 60_000);

  afterAll(async () => {
    await pg?.stop(); // lets a frozen server run first
    await store?.stop();
  });

  it('is not healthy once a probe has had no answer for PROBE_TIMEOUT_MS, and healthy again once the server answers', async () => {
    expect(store.healthy()).toBe(true);
    const thaw = pg.freeze();
    try {
      // A probe every 2 s, each given PROBE_TIMEOUT_MS.
      await waitFor(() => !store.healthy(), { what: 'the store to be reported not healthy', timeout: PROBE_TIMEOUT_MS + 5_000 });
    } finally {
      thaw();
    }
    await waitFor(() => store.healthy(), { what: 'the store to be healthy again', timeout: 10_000 });
  }, 60_000);
});
