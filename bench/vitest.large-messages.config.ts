import { defineConfig } from 'vitest/config';

/** bench/large-messages.bench.ts alone (a measurement, kept out of `npm test`). */
export default defineConfig({
  test: {
    include: ['bench/large-messages.bench.ts'],
    globalSetup: ['test/support/build-dist.ts'],
    pool: 'forks',
    maxWorkers: 1,
    testTimeout: 300_000,
    hookTimeout: 60_000,
  },
});
