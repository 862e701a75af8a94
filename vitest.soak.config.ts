import { defineConfig } from 'vitest/config';

/**
 * `npm run test:soak`: the long reliability and security runs (crash/restart, fuzzing, SMTP
 * connection floods and oversized messages) in test/soak. One file at a time: each one loads
 * both cores by itself. Bounded by the counts in each file (SOAK_* variables scale them), about
 * twelve minutes in all on two cores.
 */
export default defineConfig({
  test: {
    include: ['test/soak/**/*.soak.ts'],
    // The daemons these runs start load dist (bin/postrider.js, dist/workers/worker.js): build it
    // from the sources before the run, so no run tests stale code.
    globalSetup: ['test/support/build-dist.ts'],
    testTimeout: 20 * 60_000,
    hookTimeout: 120_000,
    pool: 'forks',
    maxWorkers: 1,
    fileParallelism: false,
    reporters: ['verbose', './test/support/unfinished-reporter.ts'],
  },
});
