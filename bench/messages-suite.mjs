/**
 * The message list and statistics series benchmark (bench/messages.mjs, which also runs on its
 * own) as a suite entry: runs it in a child process and takes its Markdown section. The default
 * is the full size, 1,000,000 messages (about 5 minutes, ~2 GB of temporary disk).
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const SCRIPT = fileURLToPath(new URL('./messages.mjs', import.meta.url));

export const meta = {
  name: 'messages',
  heading: (o) => `Message list and statistics series, ${Number(o.messages).toLocaleString('en')} messages (bench/messages.mjs)`,
  needsPostfix: false,
  options: { messages: 1000000, iterations: 50, pg: false },
  usage: '--messages=1000000, --iterations=50 per query (20 for counts; 100 for the statistics series), --pg=true (the series on PostgreSQL too)',
};

export async function run({ messages, iterations, pg }, { progress }) {
  const args = [String(messages), String(iterations), ...(pg === true || pg === 'true' ? ['pg'] : [])];
  progress(`node bench/messages.mjs ${args.join(' ')}`);
  const child = spawn(process.execPath, [SCRIPT, ...args], { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  child.stdout.on('data', (b) => (out += b));
  const code = await new Promise((r) => child.on('exit', r));
  if (code !== 0) throw new Error(`bench/messages.mjs exited with ${code}`);
  const body = out.trim().split('\n').slice(1).join('\n').trim(); // without its own "## " heading
  const reading =
    'No peer (Postfix keeps no message list or statistics). A message page walks the accepted events in seq order and ' +
    'stops after `limit` matches, so it costs the same whatever the number of messages; status=queued walks only ' +
    'the queue, status=sent skips queue members with one lookup each. Series read counters, never events: without a ' +
    'tag filter the rollup of hours and days (issue 36), one record per hour or day for the whole account (or the ' +
    'channel asked for), plus the hours and quarter hours between each edge and its nearest UTC boundary (none for ' +
    'UTC, 1-2 hours for Europe/Berlin, 5 hours and 2 quarter hours per Asia/Kolkata day); hours that start off the UTC hour ' +
    '(Kolkata) read the quarter hours of the span alone, 4 per hour; PostgreSQL sums them per bucket in the statement. The `before` rows read the same series the way they were read before it (quarter-hour and day records ' +
    'per channel and mail type), in the same run. Tag filters still read those.';
  return { text: body, reading, summary: [] };
}
