/**
 * The LMDB engine's own queue tests: records as older versions wrote them (a message without
 * acceptedSeq, a lease without an owner or a generation) and the engine's group commit. Raw
 * database access is for these tests only; the port's behaviour is in
 * test/store-contract/queue.contract.test.ts and queue-store.test.ts.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { AttemptResult } from '../../src/domain/delivery-result.js';
import type { DeliveryJob, MessageRecord } from '../../src/domain/types.js';
import { DeliveryQueue, type LeasedJob } from '../../src/queue/delivery-queue.js';
import { dbsOf } from '../../src/store/lmdb/databases.js';
import { dueMs } from '../../src/store/lmdb/queue.js';
import { openTestStore, queueMessage, type TestStore } from '../support/delivery.js';
import type { LmdbStore } from '../../src/store/lmdb/engine.js';
import { openLmdbStore } from '../support/lmdb-store.js';

let t: TestStore<LmdbStore>;
const T0 = Date.UTC(2025, 0, 6, 9, 0, 0);
const LEASE_MS = 60_000;

beforeEach(async () => {
  t = await openTestStore(openLmdbStore);
});

afterEach(async () => {
  await t.close();
});

function delivered(to: string): AttemptResult {
  return { recipients: [{ recipient: to, outcome: 'delivered', category: 'delivered', phase: 'message', smtpCode: 250, response: '250 2.0.0 OK' }], mx: 'mx.example.test', tls: true, response: '250 2.0.0 OK' };
}

/**
 * The job leased as before leases were fenced: its record has leaseUntil but no leaseOwner or
 * leaseGeneration, its jobsLeased entry holds 1.
 */
async function leaseAsBeforeFencing(jobId: string, leaseUntilMs: number): Promise<DeliveryJob> {
  const db = dbsOf(t.store);
  const job = db.jobs.get(jobId) as DeliveryJob;
  const leased: DeliveryJob = { ...job, state: 'leased', leaseUntil: new Date(leaseUntilMs).toISOString() };
  await t.store.write(() => {
    db.jobsDue.remove([dueMs(job), job.id]);
    db.jobs.put(job.id, leased);
    db.jobsLeased.put([leaseUntilMs, job.id], 1);
  });
  return leased;
}

describe('LMDB engine: leases written before fencing', () => {
  it('are taken back by a starting node whatever their expiry, and by anyone once expired', async () => {
    const a = await queueMessage(t.store, { to: ['a@one.test'], now: new Date(T0) });
    const b = await queueMessage(t.store, { to: ['b@two.test'], now: new Date(T0) });
    const [jobA] = await t.store.queue.jobsOfMessage(a);
    const [jobB] = await t.store.queue.jobsOfMessage(b);
    await leaseAsBeforeFencing(jobA.id, T0 + LEASE_MS);
    await leaseAsBeforeFencing(jobB.id, T0 + LEASE_MS);

    expect(await t.store.queue.recover({ nowMs: T0 + 1 })).toBe(0);
    expect(await t.store.queue.recover({ nowMs: T0 + 1, owner: 'local', keep: (id) => id === jobB.id })).toBe(1);
    expect(await t.store.queue.get(jobA.id)).toMatchObject({ state: 'queued', dueAt: new Date(T0 + 1).toISOString() });
    expect(await t.store.queue.recover({ nowMs: T0 + LEASE_MS })).toBe(1);
    expect((await t.store.queue.get(jobB.id))?.state).toBe('queued');

    // Leased again, they take their first generation.
    const { jobs } = await t.store.queue.lease({ owner: 'local', nowMs: T0 + LEASE_MS, max: 10, leaseMs: LEASE_MS });
    expect(jobs.map((j) => j.leaseGeneration)).toEqual([1, 1]);
  });

  it("refuse an outcome: nobody holds such a lease any more (its process is gone)", async () => {
    const id = await queueMessage(t.store, { to: ['a@one.test'], now: new Date(T0) });
    const [job] = await t.store.queue.jobsOfMessage(id);
    const old = (await leaseAsBeforeFencing(job.id, T0 + LEASE_MS)) as LeasedJob;
    const [out] = await t.store.queue.recordOutcomes([{ job: old, result: delivered('a@one.test'), attemptAt: new Date(T0 + 1) }]);
    expect(out.status).toBe('stale');
    expect(await t.store.queue.get(job.id)).toMatchObject({ state: 'leased', attempts: 0 });
  });
});

describe('LMDB engine: outcomes', () => {
  it('takes a finished message out of the message queue, by its kept accepted seq or, for a record written without it, by its first event', async () => {
    const kept = await queueMessage(t.store, { to: ['a@one.test'], now: new Date(T0) });
    const old = await queueMessage(t.store, { to: ['b@two.test'], now: new Date(T0 + 1) });
    const seqOf = async (id: string) => (await t.store.events.ofMessage(id)).find((e) => e.eventType === 'accepted')!.seq;
    expect((await t.store.messages.get(kept))?.acceptedSeq).toBe(await seqOf(kept));
    // A record as written before acceptedSeq was kept.
    const { acceptedSeq: _seq, ...older } = (await t.store.messages.get(old)) as MessageRecord;
    await t.store.write(() => dbsOf(t.store).messages.put(old, older));
    const queuedSeqs = () => [...dbsOf(t.store).messageQueue.getKeys({})].map((k) => (k as [string, number])[1]);
    expect(queuedSeqs()).toEqual([await seqOf(kept), await seqOf(old)]);
    for (const to of ['a@one.test', 'b@two.test']) {
      const { jobs } = await t.store.queue.lease({ owner: 'local', nowMs: T0 + 10, max: 1, leaseMs: LEASE_MS });
      await t.store.queue.recordOutcomes([{ job: jobs[0], attemptAt: new Date(T0 + 20), result: delivered(to) }]);
    }
    expect(queuedSeqs()).toEqual([]);
    expect(await t.store.messages.get(old)).toMatchObject({ status: 'sent', openJobs: 0 });
  });

  it('writes outcomes recorded in the same turn with one store write', async () => {
    for (const d of ['one', 'two', 'three']) await queueMessage(t.store, { to: [`a@${d}.test`], now: new Date(T0 - 1000) });
    const { jobs } = await t.store.queue.lease({ owner: 'local', nowMs: T0, max: 3, leaseMs: LEASE_MS });
    const queue = new DeliveryQueue(t.store, 'local');
    const write = vi.spyOn(t.store, 'write');
    const out = await Promise.all(jobs.map((job) => queue.record({ job, attemptAt: new Date(T0 + 1000), result: delivered(job.recipients[0]) })));
    expect(out.map((o) => o.status)).toEqual(['done', 'done', 'done']);
    expect(write).toHaveBeenCalledTimes(1);
    write.mockRestore();
  });
});
