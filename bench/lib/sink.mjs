/**
 * Postfix's smtp-sink on 127.0.0.1:2600 (the relayhost of the Postfix peer, and the MX port
 * postrider delivers to in the benchmarks), with a timestamp for every message it receives.
 *
 * `smtp-sink -c` rewrites a counter line ("sess=.. quit=.. mesg=N\r") whenever a session ends,
 * a QUIT arrives or a message's "." is received; we read it from a pipe and note when mesg
 * grows. Never stop it with -M N (it exits before answering the last 250): stop() kills it.
 */
import { spawn } from 'node:child_process';
import { onCleanup } from './cleanup.mjs';

export const SINK_PORT = 2600;

export async function startSink({ port = SINK_PORT, backlog = 1024 } = {}) {
  const child = spawn('smtp-sink', ['-c', '-u', 'nobody', `127.0.0.1:${port}`, String(backlog)], { stdio: ['ignore', 'pipe', 'pipe'] });
  const times = []; // performance.now() of each message, in order
  let count = 0;
  let waiters = [];
  let stderr = '';
  let pending = '';
  child.stderr.on('data', (b) => (stderr += b));
  child.stdout.on('data', (buf) => {
    const now = performance.now();
    pending += buf.toString('latin1');
    const parts = pending.split(/[\r\n]/);
    pending = parts.pop();
    for (const line of parts) {
      const m = /mesg=(\d+)/.exec(line);
      if (!m) continue;
      const n = Number(m[1]);
      while (count < n) {
        times.push(now);
        count++;
      }
    }
    waiters = waiters.filter((w) => (times.length >= w.n ? (w.resolve(), false) : true));
  });
  let exited = false;
  child.on('exit', () => (exited = true));
  const unregister = onCleanup(() => child.kill('SIGTERM'));
  await new Promise((r) => setTimeout(r, 300));
  if (exited) throw new Error(`smtp-sink did not start (port ${port} taken?): ${stderr}`);
  return {
    port,
    /** smtp-sink's process id (one process, event-driven): its CPU time from /proc. */
    pid: child.pid,
    times,
    /** Messages received since the start or the last reset(). */
    get count() {
      return times.length;
    },
    /** Resolves when n messages arrived since the last reset(); rejects after timeoutMs. */
    waitFor(n, timeoutMs) {
      if (times.length >= n) return Promise.resolve();
      return new Promise((resolve, reject) => {
        const w = { n, resolve };
        waiters.push(w);
        setTimeout(() => reject(new Error(`sink: ${times.length} of ${n} messages after ${timeoutMs} ms`)), timeoutMs).unref();
      });
    },
    /** Forget the messages received so far (smtp-sink's own counter keeps going). */
    reset() {
      times.length = 0;
    },
    async stop() {
      unregister();
      if (exited) return;
      const done = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      await done;
    },
  };
}

/**
 * Arrival statistics of message timestamps (ms): first→last throughput, the most
 * messages in any sliding 1-second window, and the count of each whole second from the first.
 */
export function arrivalStats(times) {
  const n = times.length;
  const spanS = n > 1 ? (times[n - 1] - times[0]) / 1000 : 0;
  let maxWindow = 0;
  let maxWindowAfterFirstSecond = 0; // windows that start at least 1 s after the first message
  for (let i = 0, j = 0; i < n; i++) {
    while (times[i] - times[j] >= 1000) j++;
    maxWindow = Math.max(maxWindow, i - j + 1);
  }
  for (let k = 0, e = 0; k < n; k++) {
    if (times[k] - times[0] < 1000) continue;
    if (e < k) e = k;
    while (e + 1 < n && times[e + 1] - times[k] < 1000) e++;
    maxWindowAfterFirstSecond = Math.max(maxWindowAfterFirstSecond, e - k + 1);
  }
  let maxGapS = 0; // the longest pause between two consecutive messages
  for (let i = 1; i < n; i++) maxGapS = Math.max(maxGapS, (times[i] - times[i - 1]) / 1000);
  const perSecond = [];
  for (const t of times) {
    const s = Math.floor((t - times[0]) / 1000);
    perSecond[s] = (perSecond[s] ?? 0) + 1;
  }
  return { n, spanS, rate: spanS > 0 ? (n - 1) / spanS : 0, maxWindow, maxWindowAfterFirstSecond, maxGapS, perSecond: Array.from(perSecond, (x) => x ?? 0) };
}
