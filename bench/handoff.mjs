/**
 * What handing a delivery to another thread would cost the main thread, per message: a job (its
 * envelope and a 2,300-byte signed message, as bench/delivery.mjs sends) goes to a worker thread
 * and an outcome (a reply line) comes back. Design input for moving delivery's SMTP sessions off
 * the main thread (bench/RESULTS.md, issue 36): the main thread spends about 0.07 ms per message on
 * the SMTP client today, so a hand-off pays only if it costs well under that.
 *
 * Ways measured, each `--n` jobs after `--n` of warm-up, `--rounds` times:
 *  - port, copy: one postMessage per job on a MessagePort, the body copied (structured clone);
 *  - port, transfer: the same with the body's ArrayBuffer transferred instead of copied;
 *  - port, batch of B: B jobs per postMessage (outcomes of one batch come back together);
 *  - piscina: one pool task per job (piscina 5, as src/workers/pool.ts runs its tasks).
 * The worker does nothing but answer, so the numbers are the hand-off alone: the main thread's CPU
 * per job (/proc, this thread) and the process's (both threads).
 *
 *   node bench/handoff.mjs [--n=50000] [--batch=25] [--rounds=2]
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import { Piscina } from 'piscina';
import { cpuMs } from './lib/cpu.mjs';

const args = Object.fromEntries(process.argv.slice(2).map((a) => a.replace(/^--/, '').split('=')));
const N = Number(args.n ?? 50_000);
const BATCH = Number(args.batch ?? 25);
const ROUNDS = Number(args.rounds ?? 2);
const BODY = Buffer.alloc(2300, 'a');

const OUTCOME = `const outcome = (job) => ({ id: job.id, outcome: 'delivered', smtpCode: 250, response: '250 2.0.0 Ok: queued as 4XYZ12ABCD' });`;
/** The port's worker answers every message; piscina's exports the task (piscina owns its thread's port). */
const PORT_WORKER = `${OUTCOME}
const { parentPort } = require('node:worker_threads');
parentPort.on('message', (m) => parentPort.postMessage(Array.isArray(m) ? m.map(outcome) : outcome(m)));
`;
const PISCINA_WORKER = `${OUTCOME}
module.exports = (job) => outcome(job);
`;

/** A job as the dispatcher would hand it over: ids, the envelope, the target and the message's bytes. */
function job(i, transfer) {
  const body = new Uint8Array(BODY.length);
  body.set(BODY);
  const j = {
    id: `0190c6a8-1111-7000-8000-${String(i).padStart(12, '0')}`,
    messageId: '0190c6a8-2222-7000-8000-000000000000',
    sender: 'bounces+0190c6a8-2222-7000-8000-000000000000-0123456789abcdef@rp.mail.example.net',
    recipients: [`user${i}@example.org`],
    host: 'mx1.example.org',
    address: '127.0.0.1',
    port: 25,
    body,
  };
  return transfer ? [j, [body.buffer]] : [j, undefined];
}

async function viaPort(worker, n, { batch = 1, transfer = false }) {
  let got = 0;
  let done;
  const finished = new Promise((r) => (done = r));
  const onMessage = (m) => {
    got += Array.isArray(m) ? m.length : 1;
    if (got >= n) done();
  };
  worker.on('message', onMessage);
  for (let i = 0; i < n; i += batch) {
    if (batch === 1) {
      const [j, list] = job(i, transfer);
      worker.postMessage(j, list);
    } else {
      const jobs = [];
      const list = [];
      for (let k = 0; k < batch; k++) {
        const [j, t] = job(i + k, transfer);
        jobs.push(j);
        if (t) list.push(...t);
      }
      worker.postMessage(jobs, transfer ? list : undefined);
    }
    // Let the answers in now and then, as a dispatcher's event loop would.
    if (i % 1000 < batch) await new Promise((r) => setImmediate(r));
  }
  await finished;
  worker.off('message', onMessage);
}

async function viaPiscina(pool, n) {
  // At most WINDOW tasks in flight; one waiter woken per finished task (a Promise.race over the
  // window would add a handler to every pending task for every task started).
  const WINDOW = 1000;
  let inFlight = 0;
  let wake = null;
  const all = [];
  for (let i = 0; i < n; i++) {
    if (inFlight >= WINDOW) await new Promise((r) => (wake = r));
    inFlight++;
    const [j] = job(i, false);
    all.push(
      pool.run(j).then(() => {
        inFlight--;
        if (wake) {
          const w = wake;
          wake = null;
          w();
        }
      }),
    );
  }
  await Promise.all(all);
}

async function measure(name, fn) {
  await fn(N); // warm-up
  const c0 = cpuMs(process.pid);
  const t0 = performance.now();
  await fn(N);
  const ms = performance.now() - t0;
  const c1 = cpuMs(process.pid);
  return { name, mainUs: ((c1.main - c0.main) / N) * 1000, totalUs: ((c1.total - c0.total) / N) * 1000, perS: N / (ms / 1000) };
}

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'postrider-handoff-'));
const portFile = path.join(dir, 'port-worker.cjs');
const piscinaFile = path.join(dir, 'piscina-worker.cjs');
fs.writeFileSync(portFile, PORT_WORKER);
fs.writeFileSync(piscinaFile, PISCINA_WORKER);
const worker = new Worker(portFile);
const pool = new Piscina({ filename: piscinaFile, minThreads: 1, maxThreads: 1 });
const ways = [
  ['port, copy', (n) => viaPort(worker, n, {})],
  ['port, transfer', (n) => viaPort(worker, n, { transfer: true })],
  [`port, batch of ${BATCH}`, (n) => viaPort(worker, n, { batch: BATCH })],
  ['piscina, a task per job', (n) => viaPiscina(pool, n)],
];
const rows = [];
for (let r = 0; r < ROUNDS; r++) for (const [name, fn] of ways) rows.push(await measure(name, fn));
await worker.terminate();
await pool.destroy();
fs.rmSync(dir, { recursive: true, force: true });

console.log(`Hand-off of ${N.toLocaleString('en')} jobs (2,300-byte message each) to one worker thread and an outcome back; CPU per job from /proc, ${ROUNDS} round(s):\n`);
console.log('| way | main thread µs per job | process µs per job | jobs/s |');
console.log('|---|---|---|---|');
for (const r of rows) console.log(`| ${r.name} | ${r.mainUs.toFixed(1)} | ${r.totalUs.toFixed(1)} | ${Math.round(r.perS).toLocaleString('en')} |`);
