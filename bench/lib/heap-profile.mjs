/**
 * Reads a sampling heap profile (.heapprofile, from bench/lib/heap-sampling.cjs) and lists the
 * bytes allocated per message: by allocating frame (the JS function that allocated: its own
 * code or a builtin it called, such as JSON.parse or String.prototype.split), by the nearest
 * frame in postrider's own code (dist/) above it, and by module. The samples are scaled by V8
 * to estimates of all bytes allocated on the JS heap; ArrayBuffer contents (Buffer data) live
 * outside it and are not counted, only their JS objects.
 */
import fs from 'node:fs';

const short = (url) =>
  url.replace(/^.*node_modules\//, '').replace(/^file:\/\/.*?\/(dist|bench)\//, '$1/').replace(/^node:/, 'node:');
const frame = (cf) => `${cf.functionName || '(anonymous)'} ${short(cf.url) || '(no script)'}:${cf.lineNumber + 1}`;
const isOwn = (cf) => /\/dist\//.test(cf.url) && !/node_modules/.test(cf.url);
function moduleOf(cf) {
  if (!cf.url) return `builtins (${cf.functionName || 'no script'})`;
  if (cf.url.startsWith('node:')) return 'node: internals';
  const m = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(cf.url);
  if (m) return m[1];
  const d = /\/dist\/([^/]+)/.exec(cf.url);
  return d ? `dist/${d[1]}` : short(cf.url);
}

/** { total, byFrame, byOwnFrame, byModule }: bytes, each a Map name → bytes, largest first. */
export function analyze(file) {
  const prof = JSON.parse(fs.readFileSync(file, 'utf8'));
  const byFrame = new Map();
  const byOwn = new Map();
  const byModule = new Map();
  let total = 0;
  const add = (m, k, v) => m.set(k, (m.get(k) ?? 0) + v);
  const walk = (node, stack) => {
    stack.push(node.callFrame);
    if (node.selfSize > 0) {
      total += node.selfSize;
      // A builtin (String.prototype.split, JSON.parse, new Map) has no script: named with its caller.
      const caller = stack.length > 1 && !node.callFrame.url ? ` in ${frame(stack[stack.length - 2])}` : '';
      add(byFrame, frame(node.callFrame) + caller, node.selfSize);
      add(byModule, moduleOf(node.callFrame), node.selfSize);
      let own = '(no postrider frame)';
      for (let i = stack.length - 1; i >= 0; i--) {
        if (isOwn(stack[i])) {
          own = frame(stack[i]);
          break;
        }
      }
      add(byOwn, own, node.selfSize);
    }
    for (const c of node.children ?? []) walk(c, stack);
    stack.pop();
  };
  walk(prof.head, []);
  const sorted = (m) => new Map([...m].sort((a, b) => b[1] - a[1]));
  return { total, byFrame: sorted(byFrame), byOwnFrame: sorted(byOwn), byModule: sorted(byModule) };
}

/** Markdown table of the first `top` entries of one map, bytes per message and share of the total. */
export function allocTable(title, map, total, n, top = 25) {
  const rows = [...map].slice(0, top).map(([k, b], i) => `| ${i + 1} | ${k.replace(/\|/g, '\\|')} | ${Math.round(b / n).toLocaleString('en')} | ${((b / total) * 100).toFixed(1)}% |`);
  return [`${title}`, '', '| # | site | bytes/msg | share |', '|---|---|---:|---:|', ...rows].join('\n');
}
