/**
 * Preload for the daemon (`node --import bench/lib/count-lease-reads.mjs bin/postrider.js serve`),
 * used by `npm run bench -- delivery --count-reads`: counts the lease scans of the due index, the
 * due keys they read, and the job records read by anyone (a lease scan reads the job of every
 * due key it looks at), and writes the totals as JSON
 * to $BENCH_COUNT_FILE when the daemon exits. Instrumentation only; the daemon is unchanged.
 */
import fs from 'node:fs';
import { isMainThread } from 'node:worker_threads';
import { Store } from '../../dist/store/lmdb/env.js';

if (isMainThread && process.env.BENCH_COUNT_FILE) {
  const counts = { leaseScans: 0, dueKeysRead: 0, jobRecordsRead: 0 };
  const start = Store.prototype.start;
  Store.prototype.start = async function (...args) {
    await start.apply(this, args);
    const { jobs, jobsDue } = this.db;
    const get = jobs.get.bind(jobs);
    jobs.get = (...a) => {
      counts.jobRecordsRead++;
      return get(...a);
    };
    const getKeys = jobsDue.getKeys.bind(jobsDue);
    jobsDue.getKeys = (...a) => {
      const keys = getKeys(...a);
      if (a[0]?.end === undefined) return keys; // not a lease scan (e.g. the next due time)
      counts.leaseScans++;
      return {
        *[Symbol.iterator]() {
          for (const k of keys) {
            counts.dueKeysRead++;
            yield k;
          }
        },
      };
    };
  };
  process.on('exit', () => fs.writeFileSync(process.env.BENCH_COUNT_FILE, JSON.stringify(counts)));
}
