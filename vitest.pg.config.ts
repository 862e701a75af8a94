import { defineConfig } from 'vitest/config';

/**
 * `npm run test:pg`: the tests that need a real PostgreSQL (`*.pg.test.ts`, issue 32). One
 * throw-away cluster is started for the run (test/support/postgres-global-setup.ts) and its URL
 * handed to the tests in POSTRIDER_TEST_PG_URL. Not part of `npm test` (vitest.config.ts
 * excludes *.pg.test.ts).
 */
export default defineConfig({
  test: {
    // The PostgreSQL engine's own tests, and the store contract suite against it (engines.ts).
    include: ['test/**/*.pg.test.ts', 'test/store-contract/*.contract.test.ts'],
    globalSetup: ['test/support/build-dist.ts', 'test/support/postgres-global-setup.ts'],
    // The default reporter, and one that names a file whose test process died under it.
    reporters: ['default', './test/support/unfinished-reporter.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    maxWorkers: 2,
  },
});
