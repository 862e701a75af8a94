/**
 * DKIM signing throughput of the worker pool (dist/workers/pool.js, the one the daemon uses),
 * RSA-2048 and ed25519, on the benchmark message (relaxed/relaxed, postrider's header list).
 * Reference points measured in the same run on the main thread: the bare private-key operation
 * (node:crypto sign of a header-sized input) with one key object, the same with the key parsed
 * from PEM for every signature (what mailauth does without a key cache in front of it), and
 * postrider's signMessage (mailauth) without the pool. No Postfix figure: Postfix does not sign (that would be a milter such as OpenDKIM).
 */
import crypto from 'node:crypto';
import os from 'node:os';
import { DkimSigner, generateDkimKey } from '../dist/workers/dkim.js';
import { WorkerPool } from '../dist/workers/pool.js';
import { composedMessage, SENDER_DOMAIN } from './lib/message.mjs';
import { fmt, table } from './lib/report.mjs';

export const meta = {
  name: 'dkim',
  heading: 'DKIM signing throughput of the worker pool (bench/dkim.mjs)',
  needsPostfix: false,
  options: { seconds: 4 },
  usage: '--seconds=4 per measurement',
};

/** Runs fn (async) with `concurrency` in flight for `seconds`; returns completions per second. */
async function rate(fn, { seconds, concurrency = 1 }) {
  const end = performance.now() + seconds * 1000;
  let done = 0;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (performance.now() < end) {
        await fn();
        done++;
      }
    }),
  );
  return done / ((performance.now() - t0) / 1000);
}

function syncRate(fn, seconds) {
  const end = performance.now() + seconds * 1000;
  let done = 0;
  const t0 = performance.now();
  while (performance.now() < end) {
    fn();
    done++;
  }
  return done / ((performance.now() - t0) / 1000);
}

export async function run({ seconds }, { progress }) {
  const raw = await composedMessage();
  // The daemon's default is one thread per core (src/workers/pool.ts); one thread, the old default
  // on two cores (one less than the cores), is measured beside it.
  const defaultThreads = os.availableParallelism();
  const threadCounts = [...new Set([1, defaultThreads])];
  const rows = [];
  const results = {};
  for (const algorithm of ['rsa', 'ed25519']) {
    const key = generateDkimKey({ algorithm });
    const privateKey = crypto.createPrivateKey(key.privateKeyPem);
    const headerBytes = Buffer.alloc(600, 'a'); // about the canonicalized signed header fields
    const label = algorithm === 'rsa' ? 'RSA-2048' : 'ed25519';
    progress(`${label}: node:crypto sign, main thread`);
    const bare = syncRate(() => crypto.sign(algorithm === 'rsa' ? 'sha256' : null, headerBytes, privateKey), seconds);
    progress(`${label}: node:crypto sign with the key parsed from PEM each time, main thread`);
    const pem = Buffer.from(key.privateKeyPem);
    const alg = algorithm === 'rsa' ? 'sha256' : null;
    const parse = syncRate(() => crypto.sign(alg, headerBytes, crypto.createPrivateKey({ key: pem, format: 'pem' })), seconds);
    const dkim = { domain: SENDER_DOMAIN, selector: 'bench', privateKeyPem: key.privateKeyPem, algorithm };
    const signer = new DkimSigner();
    const signMessage = (input) => signer.sign(input);
    progress(`${label}: signMessage (mailauth), main thread, one at a time`);
    await signMessage({ raw, ...dkim });
    const inline = await rate(() => signMessage({ raw, ...dkim }), { seconds });
    rows.push([label, 'node:crypto sign, one key object reused (main thread, 1 core)', fmt(bare), '1.00×']);
    rows.push([label, 'node:crypto sign, key parsed from PEM for each signature (mailauth on its own, without a key cache)', fmt(parse), `${(parse / bare).toFixed(2)}×`]);
    rows.push([label, "signMessage (postrider's signer, mailauth), main thread, sequential", fmt(inline), `${(inline / bare).toFixed(2)}×`]);
    for (const threads of threadCounts) {
      const pool = new WorkerPool({ threads });
      await pool.start();
      try {
        const input = { raw: new Uint8Array(raw), dkim };
        // The finishing stage's task (signing a committed raw message, as after an SMTP submission), one message per task.
        const sign = async () => {
          const [r] = await pool.finishMany([input]);
          if (r.status === 'rejected') throw r.reason;
        };
        await Promise.all(Array.from({ length: threads * 4 }, sign));
        progress(`${label}: WorkerPool.finishMany, ${threads} thread(s), ${threads * 8} in flight`);
        const pooled = await rate(sign, { seconds, concurrency: threads * 8 });
        const what = `WorkerPool.finishMany (one message per task), ${threads} thread${threads > 1 ? 's' : ''}${threads === defaultThreads ? ' (the daemon default here)' : ''}`;
        rows.push([label, what, fmt(pooled), `${(pooled / bare).toFixed(2)}×`]);
        results[`${algorithm}-${threads}`] = pooled;
      } finally {
        await pool.stop();
      }
    }
    results[`${algorithm}-bare`] = bare;
    results[`${algorithm}-parse`] = parse;
    results[`${algorithm}-inline`] = inline;
  }
  const d = defaultThreads;
  const text = [
    `Message: the ${fmt(raw.length)}-byte benchmark message (multipart/alternative), relaxed/relaxed, ` +
      `postrider's signed header list; ${seconds} s per row after a warm-up; ${os.availableParallelism()} cores, so the ` +
      `daemon's default pool has ${d} worker thread${d > 1 ? 's' : ''} (one per core). Pool rows keep 8 tasks per ` +
      'thread in flight. "ratio" is to the bare private-key operation on one core. No Postfix figure: Postfix does not sign.',
    '',
    table(['key', 'how', 'signatures/s', 'ratio to bare crypto'], rows),
  ].join('\n');
  const cached = (a) => results[`${a}-inline`] > 1.5 * results[`${a}-parse`];
  const reading =
    `RSA-2048 signing tops out at about ${fmt(results[`rsa-${d}`])} messages/s in the default pool ` +
    `(${fmt(results['rsa-bare'])}/s for the bare RSA operation on one core), ed25519 at ${fmt(results[`ed25519-${d}`])}/s. ` +
    'Parsing the PEM key for every signature, as mailauth does on its own (crypto.createPrivateKey is slow under ' +
    `OpenSSL 3), would cut the bare rate to ${fmt(results['rsa-parse'])}/s (RSA) and ${fmt(results['ed25519-parse'])}/s (ed25519); ` +
    (cached('rsa') && cached('ed25519')
      ? `postrider's signMessage runs well above that (${fmt(results['rsa-inline'])}/s and ${fmt(results['ed25519-inline'])}/s), ` +
        'so it reuses parsed keys (src/workers/dkim-keys.ts). '
      : `postrider's signMessage is close to it (${fmt(results['rsa-inline'])}/s and ${fmt(results['ed25519-inline'])}/s): ` +
        'it parses the key for every signature; caching the key object per domain would remove that cost. ') +
    (d > 1 && results[`rsa-${d}`] > 1.3 * results['rsa-1']
      ? `One thread (the old default on two cores) reached ${fmt(results['rsa-1'])} RSA signatures/s, the default ${d} threads ` +
        `${fmt(results[`rsa-${d}`])}/s: the main thread leaves the second core mostly free.`
      : `${d} threads did not beat one thread (${fmt(results['rsa-1'])}/s) in this run: the other core was busy (see the load average).`);
  return {
    text,
    reading,
    summary: [
      { measure: `DKIM RSA-2048 signatures/s, default pool (${d} thread${d > 1 ? 's' : ''})`, postrider: fmt(results[`rsa-${d}`]), postfix: 'n/a (does not sign)', ratio: 'n/a' },
      { measure: `DKIM ed25519 signatures/s, default pool (${d} thread${d > 1 ? 's' : ''})`, postrider: fmt(results[`ed25519-${d}`]), postfix: 'n/a (does not sign)', ratio: 'n/a' },
    ],
  };
}
