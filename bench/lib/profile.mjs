/**
 * Reads the .cpuprofile files `node --cpu-prof` wrote (one per thread: the daemon's main
 * thread and each worker) and lists where the time went, as self time per function and
 * inclusive time for chosen functions. Used by benchmarks run with --profile.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fmt } from './report.mjs';

const frameName = (n) =>
  `${n.callFrame.functionName || '(anonymous)'} ${n.callFrame.url.replace(/^.*node_modules\//, '').replace(/^file:\/\/.*?\/(dist|bench)\//, '$1/')}:${n.callFrame.lineNumber + 1}`;

/** { totalMs, self: [[name, ms]], inclusive: [[name, ms]] } of one profile. */
export function summarize(file) {
  const prof = JSON.parse(fs.readFileSync(file, 'utf8'));
  const byId = new Map(prof.nodes.map((n) => [n.id, n]));
  const parent = new Map();
  for (const n of prof.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const perNode = new Map();
  prof.samples.forEach((id, i) => perNode.set(id, (perNode.get(id) ?? 0) + (prof.timeDeltas[i] ?? 0)));
  const self = new Map();
  const incl = new Map();
  let total = 0;
  for (const [id, us] of perNode) {
    const name = frameName(byId.get(id));
    if (name.startsWith('(idle)')) continue;
    total += us;
    self.set(name, (self.get(name) ?? 0) + us);
    const seen = new Set();
    for (let cur = id; cur !== undefined; cur = parent.get(cur)) {
      const k = frameName(byId.get(cur));
      if (seen.has(k)) continue;
      seen.add(k);
      incl.set(k, (incl.get(k) ?? 0) + us);
    }
  }
  const sorted = (m) => [...m].sort((a, b) => b[1] - a[1]).map(([k, us]) => [k, us / 1000]);
  return { file: path.basename(file), totalMs: total / 1000, self: sorted(self), inclusive: sorted(incl) };
}

/** Summaries of every profile in dir, busiest first. */
export function summarizeDir(dir) {
  return fs
    .readdirSync(dir)
    .filter((f) => f.endsWith('.cpuprofile'))
    .map((f) => summarize(path.join(dir, f)))
    .sort((a, b) => b.totalMs - a.totalMs);
}

/** The heaviest frames by self time of each thread's profile (the daemon's whole run, start-up and warm-up included). */
export function printProfiles(profDir, progress) {
  for (const prof of summarizeDir(profDir)) {
    progress(`profile ${prof.file}: ${fmt(prof.totalMs)} ms of samples`);
    for (const [k, ms] of prof.self.filter(([k]) => !/^\((program|idle)\)/.test(k)).slice(0, 15)) {
      progress(`  ${fmt(ms).padStart(7)} ms ${((ms / prof.totalMs) * 100).toFixed(1).padStart(5)}%  ${k}`);
    }
  }
  if (process.env.BENCH_KEEP_DATA) progress(`CPU profiles kept in ${profDir}`);
  else fs.rmSync(profDir, { recursive: true, force: true });
}
