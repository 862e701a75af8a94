/**
 * The one entry point of the benchmarks:
 *
 *   npm run build && npm run bench -- <name|all> [--option=value ...] [--no-write]
 *
 * Runs the named benchmarks one after the other, printing progress on stderr, and writes each
 * result as a section of bench/RESULTS.md (date, machine, load, the exact command, a table and
 * a reading) plus its rows of the summary table (ratios postrider/Postfix). Postfix, the peer,
 * is configured with ../shared/peers/setup-postfix.sh and started once for the benchmarks
 * that compare with it, and stopped at the end. `--no-write` prints the sections instead.
 */
import { cleanupAll } from './lib/cleanup.mjs';
import { postfixAvailable, startPostfix } from './lib/postfix.mjs';
import { loadavg, machine, progress, today, writeResults } from './lib/report.mjs';

const BENCHES = {
  http: () => import('./http-send.mjs'),
  smtp: () => import('./smtp-intake.mjs'),
  e2e: () => import('./end-to-end.mjs'),
  inbound: () => import('./inbound.mjs'),
  delivery: () => import('./delivery.mjs'),
  dkim: () => import('./dkim.mjs'),
  activity: () => import('./activity-suite.mjs'),
  broadcast: () => import('./broadcast.mjs'),
  messages: () => import('./messages-suite.mjs'),
  threads: () => import('./pool-threads.mjs'),
  queue: () => import('./queue-scale.mjs'),
  cluster: () => import('./cluster.mjs'),
};
const ALL = ['http', 'smtp', 'delivery', 'dkim', 'broadcast', 'activity'];

function usage(mods) {
  const title = (m) => (typeof m.meta.heading === 'function' ? m.meta.heading(m.meta.options) : m.meta.heading);
  const lines = Object.entries(mods).map(([name, m]) => `  ${name.padEnd(10)} ${title(m)}\n  ${''.padEnd(10)} options: ${m.meta.usage}`);
  return `Usage: npm run bench -- <name ...|all> [--option=value ...] [--no-write]\n\n${lines.join('\n')}\n  all        ${ALL.join(', ')} with their defaults\n`;
}

function parseArgs(argv) {
  const names = [];
  const options = {};
  for (const a of argv) {
    const m = /^--([a-z-]+)(?:=(.*))?$/.exec(a);
    if (!m) names.push(a);
    else if (m[2] === undefined || m[2] === 'true') options[m[1]] = true;
    else if (m[2] === 'false') options[m[1]] = false;
    else options[m[1]] = Number.isNaN(Number(m[2])) ? m[2] : Number(m[2]);
  }
  return { names, options };
}

async function main() {
  const { names, options } = parseArgs(process.argv.slice(2));
  const write = !options['no-write'];
  delete options['no-write'];
  const selected = names.includes('all') ? ALL : names;
  const mods = {};
  for (const name of Object.keys(BENCHES)) if (selected.includes(name) || selected.length === 0 || options.help) mods[name] = await BENCHES[name]();
  const unknown = selected.filter((n) => !BENCHES[n]);
  if (selected.length === 0 || options.help || unknown.length) {
    if (unknown.length) process.stderr.write(`unknown benchmark: ${unknown.join(', ')}\n`);
    process.stdout.write(usage(mods));
    return unknown.length ? 64 : 0;
  }

  const needPeer = selected.some((n) => mods[n].meta.needsPostfix);
  let peer = null;
  if (needPeer) {
    const why = postfixAvailable();
    if (why) throw new Error(`${why}; the benchmarks ${selected.filter((n) => mods[n].meta.needsPostfix).join(', ')} compare with it`);
    peer = await startPostfix(progress);
  }
  try {
    for (const name of selected) {
      const mod = mods[name];
      const opts = { ...mod.meta.options, ...options };
      const command = `npm run bench -- ${name} ${Object.entries(opts).map(([k, v]) => `--${k}=${v}`).join(' ')}`.trim();
      const loadBefore = loadavg();
      progress(`=== ${name}: ${command} (load ${loadBefore})`);
      const t0 = performance.now();
      const r = await mod.run(opts, { progress, peer });
      const minutes = (performance.now() - t0) / 60000;
      const heading = typeof mod.meta.heading === 'function' ? mod.meta.heading(opts) : mod.meta.heading;
      const text = [
        `Run ${today()}, \`${command}\` (after \`npm run build\`; ${minutes.toFixed(1)} min). ` +
          `Machine: ${machine()}. Load average (1, 5, 15 min) before: ${loadBefore}; after: ${loadavg()} ` +
          '(other sessions may have been running tests on the same two cores).',
        '',
        r.text,
        '',
        `Reading: ${r.reading}`,
      ].join('\n');
      if (write) {
        writeResults({ heading, text, bench: name, summary: r.summary });
        progress(`${name}: written to bench/RESULTS.md`);
      } else {
        process.stdout.write(`\n## ${heading}\n\n${text}\n\n`);
        for (const s of r.summary ?? []) process.stdout.write(`summary | ${s.measure} | ${s.postrider} | ${s.postfix} | ${s.ratio}\n`);
      }
    }
  } finally {
    await peer?.stop();
  }
  return 0;
}

for (const sig of ['SIGINT', 'SIGTERM']) {
  process.once(sig, () => {
    progress(`${sig}: stopping everything this run started`);
    void cleanupAll().finally(() => process.exit(130));
  });
}
main().then(
  async (code) => {
    await cleanupAll();
    process.exit(code);
  },
  async (err) => {
    process.stderr.write(`bench failed: ${err.stack ?? err}\n`);
    await cleanupAll();
    process.exit(1);
  },
);
