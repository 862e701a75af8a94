/**
 * vitest globalSetup of `npm run test:pg` (vitest.pg.config.ts): one throw-away PostgreSQL
 * cluster for the whole run (test/support/postgres.ts), its URL passed to the test files in
 * POSTRIDER_TEST_PG_URL; stopped and removed at the end of the run.
 */
import { startPostgres } from './postgres.js';

export const PG_URL_ENV = 'POSTRIDER_TEST_PG_URL';

export default async function postgresGlobalSetup(): Promise<() => Promise<void>> {
  const t0 = Date.now();
  const cluster = await startPostgres();
  process.env[PG_URL_ENV] = cluster.url;
  process.stderr.write(`test:pg: PostgreSQL on 127.0.0.1:${cluster.port} (${cluster.dir}), started in ${Date.now() - t0} ms\n`);
  return async () => {
    await cluster.stop();
  };
}
