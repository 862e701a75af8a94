/**
 * The PostgreSQL rows of bench/messages.mjs's statistics series (issue 36): the LMDB store's
 * counters copied into a throw-away cluster through copy-to-postgres's own exporter and importer
 * (which also rebuild the rollup), then the same rows as on LMDB (series-rows.mjs); `before`
 * reads stat_counters the way the engine did before the rollup (its quarter-hour and day rows,
 * the code of repos/stats.ts before migration 4).
 */
import { statCounters } from '../../dist/store/lmdb/export/stats.js';
import { writeStatCounters } from '../../dist/store/postgres/import/stats.js';
import { bucketSums } from '../../dist/store/postgres/stats-read.js';
import { PostgresStore } from '../../dist/store/postgres/engine.js';
import { startPostgres } from './postgres.mjs';
import { seriesRows } from './series-rows.mjs';

const QUARTER = 900_000;
const PER_DAY = 96;

const zero = () => ({ sent: 0, delivered: 0, opened: 0, clicked: 0, bounced: 0, unsubscribed: 0, complained: 0 });
const totals = () => ({ transactional: zero(), broadcast: zero() });
const addTo = (out, mailType, v, sign = 1) => { for (const k of Object.keys(out[mailType])) out[mailType][k] += sign * (v[k] ?? 0); };
const indexOf = (edges, b) => { let i = -1; for (let k = 0; k < edges.length - 1; k++) if (b >= edges[k] && b < edges[k + 1]) i = k; return i; };

/** The engine's reads before the rollup, over stat_counters. */
function beforeRollup(sql) {
  return {
    async series(q) {
      const edges = q.edgesMs.map((ms) => Math.floor(ms / QUARTER));
      const out = edges.slice(1).map(totals);
      let i = 0;
      for (const s of await bucketSums(sql, 'q', q, [{ from: edges[0], to: edges[edges.length - 1] - 1 }])) {
        while (i < out.length - 1 && s.bucket >= edges[i + 1]) i++;
        addTo(out[i], s.mailType, s.value);
      }
      return out;
    },
    async daySeries(q) {
      const edges = q.edgesMs.map((ms) => Math.floor(ms / QUARTER));
      const midnights = edges.map((e) => Math.round(e / PER_DAY));
      const out = edges.slice(1).map(totals);
      const near = edges.flatMap((edge, i) => {
        const m = midnights[i] * PER_DAY;
        if (edge === m) return [];
        return [edge < m ? { i, from: edge, to: m - 1, sign: 1 } : { i, from: m, to: edge - 1, sign: -1 }];
      });
      let k = 0;
      for (const s of await bucketSums(sql, 'q', q, near)) {
        while (s.bucket > near[k].to) k++;
        const { i, sign } = near[k];
        if (i < out.length) addTo(out[i], s.mailType, s.value, sign);
        if (i > 0) addTo(out[i - 1], s.mailType, s.value, -sign);
      }
      const sums = await bucketSums(sql, 'd', q, [{ from: midnights[0], to: midnights[midnights.length - 1] - 1 }]);
      for (const s of sums) {
        const i = indexOf(midnights, s.bucket);
        if (i >= 0) addTo(out[i], s.mailType, s.value);
      }
      return out;
    },
  };
}

/** lmdbStore: the filled LMDB store (open). Returns the rows and how long the copy of the counters took. */
export async function pgSeriesRows({ lmdbStore, accountId, channelId, endMs, iterations, progress = () => {} }) {
  const cluster = await startPostgres();
  const store = new PostgresStore({ url: cluster.url, schema: 'postrider', poolSize: 4 });
  try {
    await store.start();
    const ctx = store['ctx'];
    const t0 = performance.now();
    let batch = [];
    let copied = 0;
    const flush = async () => {
      const records = batch;
      batch = [];
      await ctx.begin((tx) => writeStatCounters(tx, records));
      copied += records.length;
      if (copied % 200_000 < records.length) progress(`  ${copied.toLocaleString('en')} counter records copied to PostgreSQL`);
    };
    for (const r of statCounters({ dbs: lmdbStore['databases'](), nowMs: Date.now(), derived: { engagementMarks: 0 } })) {
      batch.push(r);
      if (batch.length >= 5_000) await flush();
    }
    if (batch.length > 0) await flush();
    const copyS = (performance.now() - t0) / 1000;
    await ctx.sql`VACUUM ANALYZE stat_counters`.catch(() => {});
    await ctx.sql`VACUUM ANALYZE stat_rollup`.catch(() => {});
    const rows = await seriesRows({ store, before: beforeRollup(ctx.sql), accountId, channelId, endMs, iterations, label: 'PostgreSQL: ' });
    return { rows, copied, copyS };
  } finally {
    await store.stop();
    cluster.stop();
  }
}
