import { dkimVerify } from 'mailauth/lib/dkim/verify.js';
import { simpleParser } from 'mailparser';
import { threadId as mainThreadId } from 'node:worker_threads';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { splitTxt, type GeneratedKey } from '../../src/workers/dkim.js';
import { TaskError } from '../../src/workers/errors.js';
import { WorkerPool } from '../../src/workers/pool.js';
import type { BuildInput, BuildOutput, FinishOutput, SignRawInput } from '../../src/workers/tasks.js';

// Runs real worker threads on the compiled dist/workers/worker.js (vitest's global setup builds
// it first, test/support/build-dist.ts).

/** The DKIM results mailauth finds for a message signed with key at `<selector>._domainkey.example.com`. */
async function dkimResults(raw: Buffer, selector: string, key: GeneratedKey): Promise<string[]> {
  const resolver = async (name: string) => {
    if (name !== `${selector}._domainkey.example.com`) throw Object.assign(new Error(`queryTxt ENOTFOUND ${name}`), { code: 'ENOTFOUND' });
    return [splitTxt(key.dnsValue)];
  };
  const result = await dkimVerify(raw, { resolver });
  return result.results.map((r) => r.status.result);
}

const compose: BuildInput['compose'] = {
  from: { email: 'team@example.com', name: 'Team' },
  to: [{ email: 'user@example.org' }],
  messageId: '<pool-1@example.com>',
  date: '2024-07-08T09:10:11.000Z',
};

describe('WorkerPool', () => {
  const pool = new WorkerPool({ threads: 2 });

  beforeAll(async () => {
    await pool.start();
  });

  afterAll(async () => {
    await pool.stop();
  });

  /** Signs a complete message in a worker thread through the finishing task (a raw message, nothing to compose). */
  async function signInPool(input: SignRawInput): Promise<FinishOutput> {
    const [settled] = await pool.finishMany([input]);
    if (settled!.status === 'rejected') throw settled!.reason;
    return settled!.value;
  }

  it('builds and signs a message in a worker thread', async () => {
    const key = await pool.generateKey({ algorithm: 'ed25519' });
    expect(key.dnsValue).toMatch(/^v=DKIM1; k=ed25519; p=/);
    const out = await pool.build({
      template: { subject: 'Hi {{name}}', html: '<p>{{name}}</p>', text: 'Hi {{name}}', data: { name: 'Zoë' } },
      compose,
    });
    expect(out.subject).toBe('Hi Zoë');
    expect(out.raw).toBeInstanceOf(Uint8Array);
    expect(out.size).toBe(out.raw.byteLength);
    // Built, then signed by the finishing task, as the finishing stage does after the commit.
    const signed = await signInPool({ raw: out.raw, dkim: { domain: 'example.com', selector: 'sel', privateKeyPem: key.privateKeyPem, algorithm: 'ed25519' } });
    const raw = Buffer.from(signed.raw);
    expect(raw.toString('latin1')).toMatch(/^DKIM-Signature: /);
    const parsed = await simpleParser(raw);
    expect(parsed.subject).toBe('Hi Zoë');
    expect(parsed.messageId).toBe('<pool-1@example.com>');
    // The signature the worker made is a valid one for the key the worker generated.
    expect(await dkimResults(raw, 'sel', key)).toEqual(['pass']);
  });

  it('DKIM-signs a raw message in a worker thread', async () => {
    const key = await pool.generateKey({ algorithm: 'rsa', bits: 2048 });
    const raw = Buffer.from('From: a@example.com\r\nTo: b@example.org\r\nSubject: raw\r\n\r\nbody\r\n');
    const signed = Buffer.from((await signInPool({ raw, dkim: { domain: 'example.com', selector: 'smtp', privateKeyPem: key.privateKeyPem, algorithm: 'rsa' } })).raw);
    expect(signed.toString('latin1')).toMatch(/^DKIM-Signature: v=1; a=rsa-sha256;[^]*\r\nFrom: a@example.com\r\n/);
    expect(Buffer.compare(signed.subarray(signed.length - raw.length), raw)).toBe(0);
    expect(await dkimResults(signed, 'smtp', key)).toEqual(['pass']);
  });

  it('rethrows a template error from the worker as a TaskError with code and field', async () => {
    const attempt = pool.build({ template: { subject: 'ok', html: '<p>{{#if}}</p>', data: {} }, compose });
    await expect(attempt).rejects.toBeInstanceOf(TaskError);
    await expect(attempt).rejects.toMatchObject({ code: 'templating_error', field: 'html', message: expect.stringContaining('html') });
  });

  it('reports its threads, its queue while tasks wait, and utilization once they ran', async () => {
    expect(pool.stats().threads).toBe(2);
    // Two threads take two tasks; the other four wait in piscina's queue.
    const pending = Array.from({ length: 6 }, (_, i) => pool.build({ content: { subject: `q${i}`, text: `body ${i}` }, compose }));
    expect(pool.stats().queued).toBe(4);
    await Promise.all(pending);
    const stats = pool.stats();
    expect(stats.threads).toBe(2);
    expect(stats.queued).toBe(0);
    expect(stats.utilization).toBeGreaterThan(0);
    expect(stats.utilization).toBeLessThanOrEqual(1);
  });
});

describe('WorkerPool threads', () => {
  // The real worker entry, wrapped to say which thread ran each build (test/support).
  const pool = new WorkerPool({ threads: 2, workerFile: new URL('../support/thread-id-worker.mjs', import.meta.url).pathname });

  beforeAll(async () => {
    await pool.start();
    // Let both threads come up (piscina starts them with the pool, a loaded machine may take a
    // moment): while one thread makes two RSA keys in turn, the other is ready at the latest.
    await Promise.all(Array.from({ length: 2 }, () => pool.generateKey({ algorithm: 'rsa', bits: 2048 })));
  });

  afterAll(async () => {
    await pool.stop();
  });

  it('runs several builds in parallel, on both of its threads and never on the main thread', async () => {
    const outs = (await Promise.all(
      Array.from({ length: 6 }, (_, i) => pool.build({ content: { subject: `n${i}`, text: `body ${i}` }, compose })),
    )) as Array<BuildOutput & { threadId: number }>;
    expect(outs.map((o) => o.subject)).toEqual(['n0', 'n1', 'n2', 'n3', 'n4', 'n5']);
    const threads = new Set(outs.map((o) => o.threadId));
    expect(threads.has(mainThreadId)).toBe(false);
    expect(threads.size).toBe(2);
  });
});

describe('WorkerPool lifecycle', () => {
  it('stops, and refuses tasks once stopped', async () => {
    const pool = new WorkerPool({ threads: 1 });
    await pool.start();
    await expect(pool.generateKey({ algorithm: 'ed25519' })).resolves.toMatchObject({ algorithm: 'ed25519' });
    await expect(pool.stop()).resolves.toBeUndefined();
    expect(pool.stats()).toEqual({ threads: 0, queued: 0, utilization: 0 });
    await expect(pool.build({ content: { subject: 'x' }, compose })).rejects.toMatchObject({ code: 'service_unavailable' });
    // Stopping twice is harmless.
    await expect(pool.stop()).resolves.toBeUndefined();
  });

  it('rejects a task that is still running when the pool stops with service_unavailable', async () => {
    const pool = new WorkerPool({ threads: 1 });
    await pool.start();
    const pending = expect(pool.generateKey({ algorithm: 'rsa', bits: 4096 })).rejects.toMatchObject({ code: 'service_unavailable' });
    await pool.stop();
    await pending;
  });

  it('fails to start with a clear message when the worker file does not exist', async () => {
    const pool = new WorkerPool({ threads: 1, workerFile: '/nonexistent/worker.js' });
    await expect(pool.start()).rejects.toThrow(/not found; run "npm run build"/);
  });
});
