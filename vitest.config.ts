import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
    // 2-core machines: run files in parallel, but not more than the cores can carry.
    maxWorkers: 2,
  },
});
