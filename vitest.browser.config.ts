import { defineConfig } from 'vitest/config';

/**
 * `npm run test:browser`: the web dashboard in a real browser (Debian's chromium driven by
 * playwright-core, test/browser/harness.ts). The global setup builds dist/ and dist/dashboard
 * first, as for `npm test`. Screenshots go to test-output/browser/ (not committed).
 */
export default defineConfig({
  test: {
    include: ['test/browser/**/*.test.ts'],
    globalSetup: ['test/support/build-dist.ts'],
    // The default reporter, and one that names a file whose test process died under it.
    reporters: ['default', './test/support/unfinished-reporter.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // Each file runs a daemon and a chromium: two at a time is what two cores carry.
    maxWorkers: 2,
  },
});
