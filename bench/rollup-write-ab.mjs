/**
 * The commit cost of the statistics rollup's write (issue 36): one event per transaction, through
 * appendEvents (the writer of the event log, the counters and the rollup) of this build and of
 * another build (`--compare=<dist>`), alternating, into two schemas of one throw-away PostgreSQL,
 * so both see the same load. Prints p50/p90/mean per commit and, per schema, the rollup's HOT
 * updates and size afterwards.
 *
 *   npx tsc -p tsconfig.json && node bench/rollup-write-ab.mjs --compare=../base/dist [--n=2000]
 */
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import postgres from 'postgres';
import { startPostgres } from './lib/postgres.mjs';
import { percentile } from './lib/measure.mjs';

const args = Object.fromEntries(process.argv.slice(2).map((a) => a.replace(/^--/, '').split('=')).map(([k, v]) => [k, v ?? 'true']));
const N = Number(args.n ?? 2000);
const dists = [['this', 'dist'], ['other', args.compare]].filter(([, d]) => d).map(([name, d]) => [name, path.resolve(d)]);
const cluster = await startPostgres();
const builds = [];
for (const [name, dist] of dists) {
  const { PostgresStore } = await import(path.join(dist, 'store/postgres/engine.js'));
  const { appendEvents } = await import(path.join(dist, 'store/postgres/event-log.js'));
  const store = new PostgresStore({ url: cluster.url, schema: `w_${name}`, poolSize: 1 });
  await store.start();
  builds.push({ name, store, ctx: store['ctx'], appendEvents, times: [] });
}
const account = randomUUID();
const channels = [randomUUID(), randomUUID(), randomUUID()];
const t0 = Date.now() - 3 * 86_400_000;
const draft = (i) => ({
  accountId: account, channelId: channels[i % 3], messageId: randomUUID(), mailType: i % 3 === 0 ? 'broadcast' : 'transactional', mailSource: 'api',
  eventType: i % 2 ? 'delivered' : 'processed', timestamp: new Date(t0 + i * 90_000).toISOString(), subject: 'Hello', recipients: ['r@example.com'], tags: [], metadata: {}, details: {},
});
for (let i = -100; i < N; i++) {
  for (const b of builds) {
    const s = performance.now();
    await b.ctx.begin((tx) => b.appendEvents(tx, [draft(i + 100)]));
    if (i >= 0) b.times.push(performance.now() - s);
  }
}
const admin = postgres(cluster.url, { max: 1, onnotice: false });
for (const b of builds) {
  const t = b.times.sort((x, y) => x - y);
  const mean = t.reduce((a, x) => a + x, 0) / t.length;
  const [st] = await admin.unsafe(`SELECT n_tup_upd::int AS upd, n_tup_hot_upd::int AS hot, pg_relation_size(relid)::int8 AS bytes FROM pg_stat_user_tables WHERE schemaname = 'w_${b.name}' AND relname = 'stat_rollup'`);
  console.log(`${b.name.padEnd(6)} commit p50 ${percentile(t, 50).toFixed(2)} p90 ${percentile(t, 90).toFixed(2)} mean ${mean.toFixed(2)} ms; stat_rollup updates ${st?.upd} (HOT ${st?.hot}), ${(Number(st?.bytes) / 1024).toFixed(0)} KB`);
}
await admin.end();
for (const b of builds) await b.store.stop();
cluster.stop();
