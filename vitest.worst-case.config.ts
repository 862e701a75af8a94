import { defineConfig } from 'vitest/config';

/**
 * `npm run test:worst-case`: every parser of untrusted input on a generated worst case under a time
 * budget (test/support/worst-case.ts). One file at a time, so that no other test file shares the
 * cores while a parse is being timed; the cases call the parsers directly (no build, no daemon).
 */
export default defineConfig({
  test: {
    include: ['test/worst-case/**/*.worst.ts'],
    testTimeout: 120_000,
    pool: 'forks',
    maxWorkers: 1,
    fileParallelism: false,
    reporters: ['verbose', './test/support/unfinished-reporter.ts'],
  },
});
