import { configDefaults, defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // The PostgreSQL runs need a cluster: `npm run test:pg` (vitest.pg.config.ts) starts one.
    // The dashboard's pages in chromium are `npm run test:browser` (vitest.browser.config.ts):
    // run here as well, they ran twice in CI and added about three minutes to this suite.
    exclude: [...configDefaults.exclude, 'test/**/*.pg.test.ts', 'test/browser/**'],
    // Worker threads load dist/workers/worker.js and the e2e tests run bin/postrider.js over dist:
    // build dist from the sources before the run, so no test runs stale code.
    globalSetup: ['test/support/build-dist.ts'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
    // 2-core machines: run files in parallel, but not more than the cores can carry.
    maxWorkers: 2,
    // The default reporter, and one that names a file whose test process died under it.
    reporters: ['default', './test/support/unfinished-reporter.ts'],
  },
});
