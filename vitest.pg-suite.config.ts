import { configDefaults, defineConfig } from 'vitest/config';

/**
 * The second half of `npm run test:pg`: the integration and end-to-end suites again, every
 * daemon and store on PostgreSQL (POSTRIDER_TEST_STORE_ENGINE=postgres: test/support/store.ts
 * gives each data folder its own schema on the run's throw-away cluster). The tests of what
 * only LMDB has (its data file, folder lock, backup and check) stay in `npm test`.
 */
/** Tests of the LMDB engine's own files and promises, named by what they test. */
const LMDB_ONLY: string[] = [
  // db/data.mdb deleted, truncated or overwritten, and `postrider store check` and `store backup`: LMDB's file and commands.
  'test/e2e/store-damage.test.ts',
  // A full disk under the daemon's file size limit (prlimit): on PostgreSQL the daemon writes no store file.
  'test/e2e/storage-full.test.ts',
];

export default defineConfig({
  test: {
    include: ['test/integration/**/*.test.ts', 'test/e2e/**/*.test.ts'],
    exclude: [...configDefaults.exclude, 'test/**/*.pg.test.ts', 'test/**/*.lmdb.test.ts', ...LMDB_ONLY],
    env: { POSTRIDER_TEST_STORE_ENGINE: 'postgres' },
    globalSetup: ['test/support/build-dist.ts', 'test/support/postgres-global-setup.ts'],
    // The default reporter, and one that names a file whose test process died under it.
    reporters: ['default', './test/support/unfinished-reporter.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    maxWorkers: 2,
  },
});
