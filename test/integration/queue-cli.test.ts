/** `postrider queue list|retry|drop`, run in-process against a data folder with queued jobs. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../../src/main.js';
import { openTestStore, queueMessage, type TestStore } from '../support/delivery.js';
import { testStoreEnv } from '../support/store.js';

let t: TestStore;
let jobIds: string[] = [];

beforeAll(async () => {
  t = await openTestStore();
  await queueMessage(t.store, { to: ['a@one.test'], now: new Date(Date.now() + 3_600_000) });
  await queueMessage(t.store, { to: ['b@two.test', 'c@two.test'], now: new Date(Date.now() + 7_200_000) });
  jobIds = (await t.store.queue.list({ state: 'queued' })).map((j) => j.id);
  // Committed to be signed after the commit: its job is in no list until the signature is stored.
  await queueMessage(t.store, { to: ['d@three.test'], signingDomain: 'sender.test' });
  await t.store.stop(); // the CLI opens the folder itself
});

afterAll(async () => {
  await t.reopen();
  await t.close();
});

async function cli(...args: string[]): Promise<{ code: number; out: string; err: string }> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(['queue', ...args], { out: (l) => out.push(l), err: (l) => err.push(l), env: { POSTRIDER_DATA_DIR: t.dataDir, POSTRIDER_LOG_LEVEL: 'silent', ...testStoreEnv(t.dataDir) } });
  return { code, out: out.join('\n'), err: err.join('\n') };
}

describe('postrider queue', () => {
  it('prints its usage with --help', async () => {
    const r = await cli('--help');
    expect(r.code).toBe(0);
    expect(r.out).toContain('postrider queue list');
  });

  it('lists queued jobs by due time as JSON with the queue counts', async () => {
    const r = await cli('list', '--json');
    expect(r.code).toBe(0);
    const body = JSON.parse(r.out);
    expect(body.counts).toEqual({ queued: 2, dueNow: 0, leased: 0, preparing: 1 });
    expect(body.jobs.map((j: { domain: string }) => j.domain)).toEqual(['one.test', 'two.test']);
  });

  it('lists jobs as a table for people', async () => {
    const r = await cli('list', '--limit', '1');
    expect(r.out).toMatch(/queued 2 \(due now 0\), leased 0, preparing 1 message\(s\) \(being composed and signed: due once signed\)/);
    expect(r.out).toContain('one.test');
    expect(r.out).not.toContain('two.test');
  });

  it('makes a job due now with retry', async () => {
    const r = await cli('retry', jobIds[1]);
    expect(r).toMatchObject({ code: 0, out: `job ${jobIds[1]} is due now` });
    expect(JSON.parse((await cli('list', '--json')).out).counts.dueNow).toBe(1);
  });

  it('drops a job as bounced and says so', async () => {
    const r = await cli('drop', jobIds[0], '--json');
    expect(r.code).toBe(0);
    expect(JSON.parse(r.out)).toMatchObject({ result: 'ok', job: { state: 'done' } });
    expect(JSON.parse((await cli('list', '--json')).out).counts.queued).toBe(1);
  });

  it('fails with a clear message for an unknown job', async () => {
    const r = await cli('drop', 'no-such-job');
    expect(r).toMatchObject({ code: 1, out: 'no job no-such-job' });
  });

  it('rejects an unknown state', async () => {
    const r = await cli('list', '--state', 'lost');
    expect(r.code).toBe(2);
    expect(r.err).toContain('--state must be one of');
  });
});
