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
  options: { messages: 1000000, iterations: 50 },
  usage: '--messages=1000000, --iterations=50 per query (20 for counts and year-long series)',
};

export async function run({ messages, iterations }, { progress }) {
  progress(`node bench/messages.mjs ${messages} ${iterations}`);
  const child = spawn(process.execPath, [SCRIPT, String(messages), String(iterations)], { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  child.stdout.on('data', (b) => (out += b));
  const code = await new Promise((r) => child.on('exit', r));
  if (code !== 0) throw new Error(`bench/messages.mjs exited with ${code}`);
  const body = out.trim().split('\n').slice(1).join('\n').trim(); // without its own "## " heading
  const reading =
    'No peer (Postfix keeps no message list or statistics). A message page walks the accepted events in seq order and ' +
    'stops after `limit` matches, so it costs the same whatever the number of messages; status=queued walks only ' +
    'the queue, status=sent skips queue members with one lookup each. Series read counters, never events: hourly ' +
    'reads 4 quarter-hour records per hour and channel; daily reads one UTC day record per day and channel plus ' +
    'the quarter hours between each zone midnight and the nearest UTC midnight (none for UTC, 4-8 for Europe/Berlin, ' +
    '22 for Asia/Kolkata), so its cost is bounded by days × channels × mail types, not by messages.';
  return { text: body, reading, summary: [] };
}
