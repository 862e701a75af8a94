/**
 * The activity and statistics benchmark (bench/activity.mjs, which also runs on its own) as a
 * suite entry: runs it in a child process with the given size and takes its Markdown section.
 * The suite default is 100,000 events; `--events=1000000` is the full-size run (about 3 minutes
 * and 1.7 GB of temporary disk).
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const SCRIPT = fileURLToPath(new URL('./activity.mjs', import.meta.url));

export const meta = {
  name: 'activity',
  heading: (o) => `Activity and statistics queries, ${Number(o.events).toLocaleString('en')} events (bench/activity.mjs)`,
  needsPostfix: false,
  options: { events: 100000, iterations: 100 },
  usage: '--events=100000 (1000000 for the full-size run), --iterations=100 per query',
};

export async function run({ events, iterations }, { progress }) {
  progress(`node bench/activity.mjs ${events} ${iterations}`);
  const child = spawn(process.execPath, [SCRIPT, String(events), String(iterations)], { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  child.stdout.on('data', (b) => (out += b));
  const code = await new Promise((r) => child.on('exit', r));
  if (code !== 0) throw new Error(`bench/activity.mjs exited with ${code}`);
  const body = out.trim().split('\n').slice(1).join('\n').trim(); // without its own "## " heading
  const reading =
    'No peer (Postfix keeps no activity log). Pages stop after `limit` matches, so their cost does not depend on the ' +
    'size of the log; cold totalCount is counted natively for one index and walked for intersections, up to a ' +
    'budget after which it is estimated; statistics read pre-aggregated day records. Compare with the 1,000,000-event ' +
    'section to see how each query scales with the log.';
  return { text: body, reading, summary: [] };
}
