/**
 * Preload for the daemon (`node --import bench/lib/count-lease-reads.mjs bin/postrider.js serve`),
 * used by `npm run bench -- delivery --count-reads`: counts the lease transactions and the jobs
 * they leased, the lease scans of the due index, the due keys they read, the job records read by
 * anyone (a lease scan reads the job of every due key it looks at) and the outcome writes (the
 * dispatcher's group commits), and writes the totals as JSON
 * to $BENCH_COUNT_FILE when the daemon exits. Instrumentation only; the daemon is unchanged.
 */
import fs from 'node:fs';
import { isMainThread } from 'node:worker_threads';
import { dbsOf } from '../../dist/store/lmdb/databases.js';
import { Store } from '../../dist/store/lmdb/env.js';
import { LmdbQueue } from '../../dist/store/lmdb/repos/queue.js';

if (isMainThread && process.env.BENCH_COUNT_FILE) {
  const counts = { leaseTransactions: 0, jobsLeased: 0, leaseScans: 0, dueKeysRead: 0, jobRecordsRead: 0, outcomeWrites: 0 };
  // The queue port's verbs: one lease transaction per lease(), one outcome group per recordOutcomes().
  const lease = LmdbQueue.prototype.lease;
  LmdbQueue.prototype.lease = async function (...args) {
    const r = await lease.apply(this, args);
    counts.leaseTransactions++;
    counts.jobsLeased += r.jobs.length;
    return r;
  };
  const record = LmdbQueue.prototype.recordOutcomes;
  LmdbQueue.prototype.recordOutcomes = function (...args) {
    counts.outcomeWrites++;
    return record.apply(this, args);
  };
  const start = Store.prototype.start;
  Store.prototype.start = async function (...args) {
    await start.apply(this, args);
    // The databases as the store's own modules reach them (store/lmdb/databases.ts).
    const { jobs, jobsDue } = dbsOf(this);
    const get = jobs.get.bind(jobs);
    jobs.get = (...a) => {
      counts.jobRecordsRead++;
      return get(...a);
    };
    // A lease scan is the one range read of the due index with an end and a limit
    // (store/lmdb/queue.ts leaseDueJobs); the next due time and the counts (lmdb-js's
    // getKeysCount goes through getRange) read it otherwise.
    const getRange = jobsDue.getRange.bind(jobsDue);
    jobsDue.getRange = (...a) => {
      const entries = getRange(...a);
      if (a[0]?.end === undefined || a[0]?.limit === undefined) return entries;
      counts.leaseScans++;
      return {
        *[Symbol.iterator]() {
          for (const e of entries) {
            counts.dueKeysRead++;
            yield e;
          }
        },
      };
    };
  };
  process.on('exit', () => fs.writeFileSync(process.env.BENCH_COUNT_FILE, JSON.stringify(counts)));
}
