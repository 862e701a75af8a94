/**
 * `npm run bench:smoke`: every benchmark that needs no Postfix peer, at a tiny size and without
 * writing RESULTS.md, so a change that breaks a benchmark (an API it calls went away: the dkim
 * and messages benchmarks each failed that way unnoticed) fails CI instead of the next
 * measurement. Measures nothing. Needs `npm run build` first (the benchmarks load dist/).
 *
 * The queue benchmark delivers to Postfix's smtp-sink: it runs when smtp-sink is installed and is
 * reported as skipped otherwise; the cluster benchmark needs smtp-sink and PostgreSQL's server
 * binaries (initdb) too, and runs its two-node PostgreSQL setup only. http, smtp and delivery
 * compare with the Postfix peer and are left to `npm run bench`.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import { fileURLToPath } from 'node:url';

const RUN = fileURLToPath(new URL('./run.mjs', import.meta.url));

const SMOKE = [
  ['dkim', '--seconds=0.2'],
  ['broadcast', '--entries=300', '--profile=false'],
  ['activity', '--events=2000', '--iterations=2'],
  ['messages', '--messages=2000', '--iterations=2'],
  ['threads', '--n=200', '--rounds=1'],
  ['queue', '--messages=2000', '--seconds=2', '--memory-limit=0'],
  ['cluster', '--setups=pg-2', '--n=40', '--duration=1', '--warmup=20'],
];

function onPath(cmd) {
  return spawnSync('sh', ['-c', `command -v ${cmd}`], { stdio: 'ignore' }).status === 0;
}

function hasPostgres() {
  if (process.env.POSTRIDER_PG_BIN) return fs.existsSync(`${process.env.POSTRIDER_PG_BIN}/initdb`);
  const root = '/usr/lib/postgresql';
  return fs.existsSync(root) && fs.readdirSync(root).some((d) => fs.existsSync(`${root}/${d}/bin/initdb`));
}

let failed = 0;
for (const [name, ...args] of SMOKE) {
  if ((name === 'queue' || name === 'cluster') && !onPath('smtp-sink')) {
    console.log(`bench smoke: ${name} skipped (no smtp-sink: apt-get install postfix)`);
    continue;
  }
  if (name === 'cluster' && !hasPostgres()) {
    console.log(`bench smoke: ${name} skipped (no PostgreSQL server binaries: apt-get install postgresql)`);
    continue;
  }
  const started = Date.now();
  const r = spawnSync(process.execPath, [RUN, name, ...args, '--no-write'], { encoding: 'utf8' });
  const s = ((Date.now() - started) / 1000).toFixed(1);
  if (r.status === 0) {
    console.log(`bench smoke: ${name} ok (${s} s)`);
  } else {
    failed++;
    console.log(`bench smoke: ${name} FAILED (exit ${r.status ?? r.signal}, ${s} s)\n${(r.stdout + r.stderr).split('\n').slice(-25).join('\n')}`);
  }
}
process.exitCode = failed > 0 ? 1 : 0;
