/**
 * Progress output, statistics and bench/RESULTS.md: every benchmark's section is replaced by
 * its newest run (keyed by its "## " heading), and its rows of the summary table at the top are
 * replaced too (keyed by the first cell, the benchmark's name).
 */
import fs from 'node:fs';
import os from 'node:os';
import { fileURLToPath } from 'node:url';

export const RESULTS = fileURLToPath(new URL('../RESULTS.md', import.meta.url));
const ORDER = ['http', 'smtp', 'e2e', 'inbound', 'delivery', 'dkim', 'broadcast', 'activity'];
const SUMMARY_HEADING = '## Summary: postrider / Postfix, same run';
const SUMMARY_HEAD = ['| benchmark | measure | postrider | Postfix | ratio postrider/Postfix | date |', '|---|---|---|---|---|---|'];

const started = performance.now();
export function progress(msg) {
  process.stderr.write(`[bench ${((performance.now() - started) / 1000).toFixed(1).padStart(6)}s] ${msg}\n`);
}

export function percentile(sorted, p) {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

/** The round with the highest rate: the one least disturbed by whatever else ran on the machine. */
export const best = (rounds) => rounds.reduce((a, b) => (b.rate > a.rate ? b : a));

export const loadavg = () => os.loadavg().map((x) => x.toFixed(2)).join(', ');

export function machine() {
  const cpu = os.cpus()[0]?.model?.trim() ?? 'unknown CPU';
  return `${os.cpus().length} × ${cpu}, ${(os.totalmem() / 2 ** 30).toFixed(0)} GiB RAM, Node ${process.version}, ${os.platform()} ${os.release()}`;
}

export const today = () => new Date().toISOString().slice(0, 10);
export const fmt = (x, digits = 0) => (Number.isFinite(x) ? x.toLocaleString('en', { maximumFractionDigits: digits, minimumFractionDigits: digits }) : 'n/a');
export const ratio = (a, b) => (Number.isFinite(a) && Number.isFinite(b) && b > 0 ? `${(a / b).toFixed(2)}×` : 'n/a');

export function table(head, rows) {
  return [`| ${head.join(' | ')} |`, `|${head.map(() => '---').join('|')}|`, ...rows.map((r) => `| ${r.join(' | ')} |`)].join('\n');
}

/**
 * Writes one section (heading + text) into RESULTS.md, replacing a section with the same
 * heading, and replaces this benchmark's rows in the summary table.
 */
export function writeResults({ heading, text, bench, summary = [] }) {
  let doc = fs.existsSync(RESULTS) ? fs.readFileSync(RESULTS, 'utf8') : '# Benchmark results\n';
  doc = upsertSection(doc, `## ${heading}`, text);
  if (summary.length) doc = upsertSummary(doc, bench, summary);
  fs.writeFileSync(RESULTS, doc.replace(/\n{3,}/g, '\n\n').trimEnd() + '\n');
}

/** Splits the document at "## " headings: [preamble, ...sections]. */
function split(doc) {
  const parts = doc.split(/\n(?=## )/);
  return { preamble: parts[0], sections: parts.slice(1) };
}

function upsertSection(doc, heading, text) {
  const { preamble, sections } = split(doc);
  const body = `${heading}\n\n${text.trim()}\n`;
  const i = sections.findIndex((s) => s.split('\n')[0].trim() === heading);
  if (i >= 0) sections[i] = body;
  else sections.push(body);
  return [preamble.trimEnd() + '\n', ...sections].join('\n');
}

function upsertSummary(doc, bench, rows) {
  const { preamble, sections } = split(doc);
  let i = sections.findIndex((s) => s.startsWith(SUMMARY_HEADING));
  if (i < 0) {
    sections.unshift(`${SUMMARY_HEADING}\n\n${summaryIntro()}\n\n${SUMMARY_HEAD.join('\n')}\n`);
    i = 0;
  }
  const lines = sections[i].trimEnd().split('\n');
  const kept = lines.filter((l) => !l.startsWith(`| ${bench} |`));
  const newRows = rows.map((r) => `| ${bench} | ${r.measure} | ${r.postrider} | ${r.postfix} | ${r.ratio} | ${today()} |`);
  // Rebuild the table as one block, rows in the suite's order of benchmarks (stable within one).
  const first = kept.findIndex((l) => l.startsWith('|'));
  const head = kept.slice(first, first + 2);
  const body = [...kept.slice(first + 2).filter((l) => l.startsWith('|')), ...newRows];
  const rank = (l) => {
    const k = ORDER.indexOf(l.split('|')[1].trim());
    return k < 0 ? ORDER.length : k;
  };
  body.sort((a, b) => rank(a) - rank(b));
  sections[i] = [...kept.slice(0, first), ...head, ...body].join('\n') + '\n';
  return [preamble.trimEnd() + '\n', ...sections].join('\n');
}

function summaryIntro() {
  return (
    'Each row is from one run of `npm run bench -- <benchmark>` in which postrider and the Postfix peer were ' +
    'measured one after the other on the same machine (details, load and commands in the sections below). ' +
    'Ratios above 1× favour postrider for rates, below 1× for latencies and times.'
  );
}
