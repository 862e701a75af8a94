/**
 * The longest stretches a CPU profile's thread was never idle: what held the event loop at once,
 * which a profile's totals do not show. For each of the longest runs of samples without an
 * (idle) or (program) one: its length, when it began, and the functions with the most time in it
 * (own time, and time with callees).
 *
 *   node bench/lib/busy-runs.mjs FILE.cpuprofile [--runs=5] [--after=SECONDS] [--top=12]
 *
 * Make the profile with node --cpu-prof --cpu-prof-interval=500 (a vitest run: test.execArgv).
 */
import fs from 'node:fs';

const args = Object.fromEntries(process.argv.slice(3).map((a) => a.replace(/^--/, '').split('=')));
const file = process.argv[2];
if (!file) {
  console.error('usage: node bench/lib/busy-runs.mjs FILE.cpuprofile [--runs=5] [--after=SECONDS] [--top=12]');
  process.exit(64);
}
const profile = JSON.parse(fs.readFileSync(file, 'utf8'));
const nodes = new Map(profile.nodes.map((n) => [n.id, n]));
const parent = new Map();
for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
const name = (id) => {
  const f = nodes.get(id).callFrame;
  return `${f.functionName || '(anonymous)'} ${f.url.split('/').slice(-2).join('/')}:${f.lineNumber + 1}`;
};
const idle = (id) => ['(idle)', '(program)'].includes(nodes.get(id).callFrame.functionName);

let at = profile.startTime;
const times = profile.samples.map((_, i) => (at += profile.timeDeltas[i]));
const runs = [];
let start = null;
for (let i = 0; i < profile.samples.length; i++) {
  if (!idle(profile.samples[i])) start ??= i;
  else if (start !== null) {
    runs.push({ us: times[i] - times[start], from: start, to: i });
    start = null;
  }
}
const after = Number(args.after ?? 0) * 1e6;
const top = Number(args.top ?? 12);
const chosen = runs.filter((r) => times[r.from] - profile.startTime >= after).sort((a, b) => b.us - a.us).slice(0, Number(args.runs ?? 5));
for (const run of chosen) {
  const own = new Map();
  const total = new Map();
  for (let i = run.from; i < run.to; i++) {
    const ms = (times[i + 1] - times[i]) / 1000;
    own.set(name(profile.samples[i]), (own.get(name(profile.samples[i])) ?? 0) + ms);
    const seen = new Set();
    for (let id = profile.samples[i]; id !== undefined; id = parent.get(id)) {
      const k = name(id);
      if (!seen.has(k)) total.set(k, (total.get(k) ?? 0) + ms);
      seen.add(k);
    }
  }
  console.log(`\n${(run.us / 1000).toFixed(1)} ms busy from ${((times[run.from] - profile.startTime) / 1e6).toFixed(2)} s`);
  console.log('  own time:');
  for (const [k, v] of [...own].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`    ${v.toFixed(1).padStart(7)} ms  ${k}`);
  console.log('  with callees:');
  for (const [k, v] of [...total].sort((a, b) => b[1] - a[1]).slice(0, top * 2)) console.log(`    ${v.toFixed(1).padStart(7)} ms  ${k}`);
}
