/**
 * QueuePort's contract (store/port/queue.ts), once per engine: leasing in due order, outcomes,
 * release, discard, recovery, the operator's retry and drop, an account's queue; and the atomic
 * rules under racing callers: concurrent leasers never get one job twice, a job's lease is
 * fenced (a stale owner's outcome, release or discard is refused and writes nothing), recovery
 * takes back expired leases and the starting node's own, never another node's live one.
 */
import { expect, it } from 'vitest';
import type { AttemptResult } from '../../src/domain/delivery-result.js';
import type { StorePort } from '../../src/store/port/index.js';
import type { LeasedJob, RecordOutcomeInput } from '../../src/store/port/queue.js';
import { ACCOUNT, CHANNEL, queueMessage } from '../support/delivery.js';
import { eachEngine } from './engines.js';

const T0 = Date.parse('2025-01-06T09:00:00.000Z');
const MINUTE = 60_000;
const LEASE_MS = 10 * MINUTE;

/** A message accepted at `atMs`: one job per recipient domain, due at atMs. */
function queueAt(store: StorePort, atMs: number, to: string[], o: { channelId?: string } = {}): Promise<string> {
  return queueMessage(store, { to, now: new Date(atMs), ...o });
}

function delivered(recipients: readonly string[]): AttemptResult {
  return { recipients: recipients.map((recipient) => ({ recipient, outcome: 'delivered', category: 'other', phase: 'data', smtpCode: 250, response: '250 2.0.0 OK' })), tls: true, mx: 'mx.test', response: '250 2.0.0 OK' };
}

function deferred(recipients: readonly string[]): AttemptResult {
  return { recipients: recipients.map((recipient) => ({ recipient, outcome: 'deferred', category: 'other', phase: 'rcpt', smtpCode: 451, response: '451 4.3.0 later' })), tls: true, mx: 'mx.test', response: '451 4.3.0 later' };
}

function outcome(job: LeasedJob, result: AttemptResult, atMs: number, nextDueAtMs?: number): RecordOutcomeInput {
  return { job, result, attemptAt: new Date(atMs), nextDueAtMs };
}

async function leaseAll(store: StorePort, owner: string, nowMs: number, max = 100): Promise<LeasedJob[]> {
  return (await store.queue.lease({ owner, nowMs, max, leaseMs: LEASE_MS })).jobs;
}

eachEngine('QueuePort: leasing', (ctx) => {
  it('leases due jobs in due order to the owner, each with its first generation, and leaves jobs not yet due', async () => {
    const store = ctx.store;
    await queueAt(store, T0 + 2_000, ['b@two.test']);
    await queueAt(store, T0 + 1_000, ['a@one.test']);
    await queueAt(store, T0 + 3_600_000, ['c@later.test']);

    const res = await store.queue.lease({ owner: 'node-a', nowMs: T0 + 5_000, max: 10, leaseMs: LEASE_MS });
    expect(res.jobs.map((j) => j.domain)).toEqual(['one.test', 'two.test']);
    for (const job of res.jobs) {
      expect(job).toMatchObject({ state: 'leased', leaseOwner: 'node-a', leaseGeneration: 1, leaseUntil: new Date(T0 + 5_000 + LEASE_MS).toISOString() });
    }
    expect(res).toMatchObject({ skipped: 0, discarded: 0 });
    expect(await store.queue.counts(T0 + 5_000)).toEqual({ queued: 1, dueNow: 0, leased: 2 });
    expect(await store.queue.nextDueAfter(T0 + 5_000)).toBe(T0 + 3_600_000);
  });

  it('takes at most max jobs, and leaves those the predicates refuse due', async () => {
    const store = ctx.store;
    const domains = ['one', 'busy', 'two', 'busy', 'three'];
    for (const [i, d] of domains.entries()) await queueAt(store, T0 + i, [`x@${d}.test`]);
    const first = await store.queue.lease({ owner: 'n', nowMs: T0 + 10, max: 1, leaseMs: LEASE_MS });
    expect(first.jobs.map((j) => j.domain)).toEqual(['one.test']);
    const rest = await store.queue.lease({ owner: 'n', nowMs: T0 + 10, max: 10, leaseMs: LEASE_MS, acceptDomain: (d) => d !== 'busy.test', accept: (j) => j.domain !== 'three.test' });
    expect(rest.jobs.map((j) => j.domain)).toEqual(['two.test']);
    expect(rest.skipped).toBe(3);
    expect(await store.queue.counts(T0 + 10)).toEqual({ queued: 3, dueNow: 3, leased: 2 });
  });

  it('never gives one job to two of many concurrent leasers', async () => {
    const store = ctx.store;
    for (let i = 0; i < 30; i++) await queueAt(store, T0 + i, [`r${i}@d${i}.test`]);
    const owners = ['a', 'b', 'c', 'd', 'e', 'f'];
    const results = await Promise.all(owners.map((owner) => store.queue.lease({ owner, nowMs: T0 + MINUTE, max: 8, leaseMs: LEASE_MS })));
    const ids = results.flatMap((r) => r.jobs.map((j) => j.id));
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids).toHaveLength(30);
    results.forEach((r, i) => r.jobs.forEach((j) => expect(j.leaseOwner).toBe(owners[i])));
    expect(await store.queue.counts(T0 + MINUTE)).toEqual({ queued: 0, dueNow: 0, leased: 30 });
  });

  it('removes due jobs of a deleted channel instead of leasing them, and says the channel is deleted', async () => {
    const store = ctx.store;
    const channel = await store.channels.create({ accountId: ACCOUNT, name: 'gone', deliveryType: 'live', tracking: { links: false, opens: false }, maxPerAccount: 10 });
    const gone = await queueAt(store, T0, ['a@one.test'], { channelId: channel.id });
    await queueAt(store, T0, ['b@two.test']);
    expect(store.queue.channelDeleted(channel.id)).toBe(false);
    await store.channels.delete(channel.id);
    expect(store.queue.channelDeleted(channel.id)).toBe(true);
    expect(store.queue.channelDeleted(CHANNEL)).toBe(false);

    const res = await store.queue.lease({ owner: 'n', nowMs: T0, max: 10, leaseMs: LEASE_MS });
    expect(res.jobs.map((j) => j.domain)).toEqual(['two.test']);
    expect(res.discarded).toBe(1);
    expect(await store.queue.jobsOfMessage(gone)).toEqual([]);
  });

  it('continues a scan after the round-robin cursor it returned', async () => {
    const store = ctx.store;
    for (let i = 0; i < 6; i++) await queueAt(store, T0 + i, [`r@busy${i < 4 ? '' : i}.test`]);
    const first = await store.queue.lease({ owner: 'n', nowMs: T0 + MINUTE, max: 1, leaseMs: LEASE_MS, acceptDomain: (d) => d !== 'busy.test', scanLimit: 2 });
    expect(first.jobs).toEqual([]);
    expect(first.resumeAfter).toBeDefined();
    const second = await store.queue.lease({ owner: 'n', nowMs: T0 + MINUTE, max: 1, leaseMs: LEASE_MS, acceptDomain: (d) => d !== 'busy.test', scanLimit: 3, after: first.resumeAfter });
    expect(second.jobs.map((j) => j.domain)).toEqual(['busy4.test']);
  });
});

eachEngine('QueuePort: outcomes', (ctx) => {
  it('records a delivery: the job is done with its attempt in its history, the message sent', async () => {
    const store = ctx.store;
    const id = await queueAt(store, T0, ['a@one.test']);
    const [job] = await leaseAll(store, 'n', T0);
    const [out] = await store.queue.recordOutcomes([outcome(job, delivered(job.recipients), T0 + 1_000)]);
    expect(out).toMatchObject({ status: 'done', attempt: 1, delivered: ['a@one.test'] });
    const after = await store.queue.get(job.id);
    expect(after).toMatchObject({ state: 'done', attempts: 1, history: [expect.objectContaining({ outcome: 'delivered', mx: 'mx.test' })] });
    expect(after).not.toHaveProperty('leaseOwner');
    expect(after).not.toHaveProperty('leaseGeneration');
    expect((await store.messages.get(id))?.status).toBe('sent');
    expect(await store.queue.counts(T0 + 2_000)).toEqual({ queued: 0, dueNow: 0, leased: 0 });
  });

  it('requeues deferred recipients at the next due time, and the next lease takes the next generation', async () => {
    const store = ctx.store;
    await queueAt(store, T0, ['a@one.test']);
    const [job] = await leaseAll(store, 'n', T0);
    const [out] = await store.queue.recordOutcomes([outcome(job, deferred(job.recipients), T0 + 1_000, T0 + 5 * MINUTE)]);
    expect(out).toMatchObject({ status: 'requeued', deferred: ['a@one.test'] });
    expect(await store.queue.get(job.id)).toMatchObject({ state: 'queued', attempts: 1, dueAt: new Date(T0 + 5 * MINUTE).toISOString() });
    expect(await leaseAll(store, 'n', T0 + MINUTE)).toEqual([]);
    const [again] = await leaseAll(store, 'n', T0 + 5 * MINUTE);
    expect(again).toMatchObject({ id: job.id, leaseGeneration: 2, attempts: 1 });
  });

  it('keeps the time a job waited for a sending source (heldMs) across its leases, and adds each wait', async () => {
    const store = ctx.store;
    await queueAt(store, T0, ['a@one.test']);
    const [job] = await leaseAll(store, 'n', T0);
    const refused = { ...deferred(job.recipients), poolRefused: { until: T0 + 60 * MINUTE } };
    await store.queue.recordOutcomes([outcome(job, refused, T0 + 1_000, T0 + 60 * MINUTE)]);
    expect(await store.queue.get(job.id)).toMatchObject({ state: 'queued', heldMs: 60 * MINUTE - 1_000 });
    const [again] = await leaseAll(store, 'n', T0 + 60 * MINUTE);
    expect(again.heldMs).toBe(60 * MINUTE - 1_000);
    // A receiver's deferral is the message's age: nothing added.
    await store.queue.recordOutcomes([outcome(again, deferred(again.recipients), T0 + 61 * MINUTE, T0 + 70 * MINUTE)]);
    expect((await store.queue.get(job.id))?.heldMs).toBe(60 * MINUTE - 1_000);
  });

  it('gives deferred recipients up (expired) without a next due time', async () => {
    const store = ctx.store;
    await queueAt(store, T0, ['a@one.test']);
    const [job] = await leaseAll(store, 'n', T0);
    const [out] = await store.queue.recordOutcomes([outcome(job, deferred(job.recipients), T0 + 1_000)]);
    expect(out).toMatchObject({ status: 'done', expired: ['a@one.test'], deferred: [] });
  });

  it('records a batch of outcomes, each as if alone and in order', async () => {
    const store = ctx.store;
    await queueAt(store, T0, ['a@one.test']);
    await queueAt(store, T0 + 1, ['b@two.test']);
    const jobs = await leaseAll(store, 'n', T0 + 10);
    const outs = await store.queue.recordOutcomes([outcome(jobs[0], delivered(jobs[0].recipients), T0 + 20), outcome(jobs[1], deferred(jobs[1].recipients), T0 + 20, T0 + MINUTE)]);
    expect(outs.map((o) => o.status)).toEqual(['done', 'requeued']);
  });

  it('records the outcome of a job loaded for its attempt against the message as committed since (another job dropped meanwhile)', async () => {
    const store = ctx.store;
    const id = await queueAt(store, T0, ['a@one.test', 'b@two.test']);
    const [job] = (await store.queue.lease({ owner: 'n', nowMs: T0 + 10, max: 1, leaseMs: LEASE_MS })).jobs;
    // The attempt loads the message (as the dispatcher does), then the other job ends before its outcome.
    expect((await store.messages.withBody(job.messageId))?.message.openJobs).toBe(2);
    const other = (await store.queue.jobsOfMessage(id)).find((j) => j.id !== job.id)!;
    expect((await store.queue.drop(other.id, new Date(T0 + 15))).result).toBe('ok');
    expect(await store.messages.get(id)).toMatchObject({ openJobs: 1, status: 'queued' });
    await store.queue.recordOutcomes([outcome(job, delivered(job.recipients), T0 + 20)]);
    expect(await store.messages.get(id)).toMatchObject({ openJobs: 0, status: 'sent' });
  });

  it('records one outcome only when the same lease reports twice at once', async () => {
    const store = ctx.store;
    const id = await queueAt(store, T0, ['a@one.test']);
    const [job] = await leaseAll(store, 'n', T0);
    const input = outcome(job, delivered(job.recipients), T0 + 1_000);
    const outs = await Promise.all([store.queue.recordOutcomes([input]), store.queue.recordOutcomes([input]), store.queue.recordOutcomes([input])]);
    expect(outs.map(([o]) => o.status).sort()).toEqual(['done', 'stale', 'stale']);
    expect(await store.queue.get(job.id)).toMatchObject({ state: 'done', attempts: 1 });
    const events = await store.events.ofMessage(id);
    expect(events.filter((e) => e.eventType === 'delivered')).toHaveLength(1);
  });
});

eachEngine('QueuePort: fencing', (ctx) => {
  /** Node A leases the job; its lease expires and node B recovers and leases it again. */
  async function takenOver(store: StorePort): Promise<{ stale: LeasedJob; current: LeasedJob }> {
    await queueAt(store, T0, ['a@one.test']);
    const [stale] = await leaseAll(store, 'node-a', T0);
    expect(await store.queue.recover({ nowMs: T0 + LEASE_MS + 1 })).toBe(1);
    const [current] = await leaseAll(store, 'node-b', T0 + LEASE_MS + 1);
    expect(current).toMatchObject({ id: stale.id, leaseOwner: 'node-b', leaseGeneration: stale.leaseGeneration + 1 });
    return { stale, current };
  }

  it("refuses a stale owner's outcome and writes nothing for it", async () => {
    const store = ctx.store;
    const { stale, current } = await takenOver(store);
    const [out] = await store.queue.recordOutcomes([outcome(stale, delivered(stale.recipients), T0 + LEASE_MS + 2)]);
    expect(out.status).toBe('stale');
    expect(await store.queue.get(stale.id)).toMatchObject({ state: 'leased', attempts: 0, history: [] });
    expect((await store.events.ofMessage(stale.messageId)).map((e) => e.eventType)).not.toContain('delivered');
    const [ok] = await store.queue.recordOutcomes([outcome(current, delivered(current.recipients), T0 + LEASE_MS + 3)]);
    expect(ok.status).toBe('done');
  });

  it("refuses a stale owner's release and discard", async () => {
    const store = ctx.store;
    const { stale, current } = await takenOver(store);
    expect(await store.queue.release(stale, T0)).toBe(false);
    expect(await store.queue.discard([stale])).toBe(0);
    expect(await store.queue.get(stale.id)).toMatchObject({ state: 'leased', leaseUntil: current.leaseUntil });
    expect(await store.queue.release(current, T0 + LEASE_MS + 5)).toBe(true);
    expect(await store.queue.get(current.id)).toMatchObject({ state: 'queued', attempts: 0, dueAt: new Date(T0 + LEASE_MS + 5).toISOString() });
  });

  it('refuses an outcome from the same owner after its lease was recovered and taken again', async () => {
    const store = ctx.store;
    await queueAt(store, T0, ['a@one.test']);
    const [first] = await leaseAll(store, 'node-a', T0);
    await store.queue.recover({ nowMs: T0 + LEASE_MS });
    const [second] = await leaseAll(store, 'node-a', T0 + LEASE_MS);
    // Same owner; a lease of the same length may even end at the same time: the generation tells them apart.
    expect(second.leaseGeneration).toBe(first.leaseGeneration + 1);
    const [out] = await store.queue.recordOutcomes([outcome({ ...first, leaseUntil: second.leaseUntil }, delivered(first.recipients), T0 + LEASE_MS + 1)]);
    expect(out.status).toBe('stale');
  });

  it('lets exactly one of an outcome and a racing release win one lease', async () => {
    const store = ctx.store;
    await queueAt(store, T0, ['a@one.test']);
    const [job] = await leaseAll(store, 'n', T0);
    const [[out], released] = await Promise.all([store.queue.recordOutcomes([outcome(job, delivered(job.recipients), T0 + 1)]), store.queue.release(job, T0 + 2)]);
    expect([out.status !== 'stale', released].filter(Boolean)).toHaveLength(1);
    expect((await store.queue.get(job.id))?.attempts).toBe(out.status === 'stale' ? 0 : 1);
  });
});

eachEngine('QueuePort: recovery', (ctx) => {
  it('takes back expired leases only, sparing those the caller keeps', async () => {
    const store = ctx.store;
    await queueAt(store, T0, ['a@one.test']);
    await queueAt(store, T0 + 1, ['b@two.test']);
    const [a, b] = await leaseAll(store, 'n', T0 + 1);
    expect(await store.queue.recover({ nowMs: T0 + 2 })).toBe(0);
    expect(await store.queue.recover({ nowMs: T0 + 1 + LEASE_MS, keep: (id) => id === a.id })).toBe(1);
    expect(await store.queue.get(b.id)).toMatchObject({ state: 'queued', dueAt: new Date(T0 + 1 + LEASE_MS).toISOString(), attempts: 0 });
    expect((await store.queue.get(a.id))?.state).toBe('leased');
  });

  it("takes back the starting node's own live leases, and never another node's", async () => {
    const store = ctx.store;
    await queueAt(store, T0, ['a@one.test']);
    await queueAt(store, T0 + 1, ['b@two.test']);
    const [mine] = await leaseAll(store, 'node-a', T0 + 1, 1);
    const [theirs] = await leaseAll(store, 'node-b', T0 + 1, 1);
    expect(await store.queue.recover({ nowMs: T0 + 2, owner: 'node-a' })).toBe(1);
    expect((await store.queue.get(mine.id))?.state).toBe('queued');
    expect(await store.queue.get(theirs.id)).toMatchObject({ state: 'leased', leaseUntil: theirs.leaseUntil });
    // Once node-b's lease has expired, anyone takes it back.
    expect(await store.queue.recover({ nowMs: T0 + 1 + LEASE_MS, owner: 'node-a' })).toBe(1);
  });

  it('keeps leases across a restart, and the node takes its own back at its start', async () => {
    await queueAt(ctx.store, T0, ['a@one.test']);
    const [job] = await leaseAll(ctx.store, 'node-a', T0);
    const store = await ctx.reopen();
    expect(await store.queue.get(job.id)).toMatchObject({ state: 'leased', leaseUntil: job.leaseUntil });
    expect(await store.queue.recover({ nowMs: T0 + 1, owner: 'node-b' })).toBe(0);
    expect(await store.queue.recover({ nowMs: T0 + 1, owner: 'node-a' })).toBe(1);
    const [again] = await leaseAll(store, 'node-a', T0 + 2);
    expect(again).toMatchObject({ id: job.id, leaseGeneration: 2 });
  });
});

eachEngine('QueuePort: the operator', (ctx) => {
  it('lists and counts jobs by state, and gets one', async () => {
    const store = ctx.store;
    await queueAt(store, T0 + 2 * MINUTE, ['b@two.test']);
    await queueAt(store, T0, ['a@one.test']);
    const [leased] = await leaseAll(store, 'n', T0, 1);
    expect((await store.queue.list({ state: 'queued' })).map((j) => j.domain)).toEqual(['two.test']);
    expect((await store.queue.list({ state: 'leased' })).map((j) => j.domain)).toEqual(['one.test']);
    expect((await store.queue.list()).map((j) => j.domain)).toEqual(['one.test', 'two.test']);
    expect(await store.queue.list({ state: 'open', limit: 1, offset: 1 })).toHaveLength(1);
    expect(await store.queue.list({ state: 'done' })).toEqual([]);
    expect(await store.queue.get(leased.id)).toMatchObject({ state: 'leased', leaseUntil: leased.leaseUntil });
    expect(await store.queue.get(leased.id)).not.toHaveProperty('leaseOwner');
    expect(await store.queue.get('no-such-job')).toBeUndefined();
    expect(await store.queue.jobsOfMessage('no-such-message')).toEqual([]);
    expect(await store.queue.counts(T0 + 2 * MINUTE)).toEqual({ queued: 1, dueNow: 1, leased: 1 });
  });

  it('retries a queued job now and answers for leased, done and unknown jobs', async () => {
    const store = ctx.store;
    await queueAt(store, T0 + 3_600_000, ['a@one.test']);
    const [job] = await store.queue.list({ state: 'queued' });
    expect(await store.queue.retry(job.id, T0)).toEqual({ result: 'ok', job: expect.objectContaining({ state: 'queued', dueAt: new Date(T0).toISOString() }) });
    const [leased] = await leaseAll(store, 'n', T0);
    expect((await store.queue.retry(job.id, T0)).result).toBe('leased');
    await store.queue.recordOutcomes([outcome(leased, delivered(leased.recipients), T0 + 1)]);
    expect((await store.queue.retry(job.id, T0)).result).toBe('done');
    expect(await store.queue.retry('no-such-job', T0)).toEqual({ result: 'not_found', job: undefined });
  });

  it('drops a queued job as bounced, once, however many operators drop it at once', async () => {
    const store = ctx.store;
    const id = await queueAt(store, T0, ['a@one.test', 'b@one.test']);
    const [job] = await store.queue.jobsOfMessage(id);
    const results = await Promise.all([0, 1, 2].map(() => store.queue.drop(job.id, new Date(T0 + 1))));
    expect(results.map((r) => r.result).sort()).toEqual(['done', 'done', 'ok']);
    expect(await store.queue.get(job.id)).toMatchObject({ state: 'done' });
    const bounced = (await store.events.ofMessage(id)).filter((e) => e.eventType === 'bounced');
    expect(bounced.map((e) => e.recipients).flat().sort()).toEqual(['a@one.test', 'b@one.test']);
    expect((await store.messages.get(id))?.status).toBe('sent');
  });

  it('lets a lease and a racing drop never both take one job', async () => {
    const store = ctx.store;
    await queueAt(store, T0, ['a@one.test']);
    const [job] = await store.queue.list({ state: 'queued' });
    const [leased, dropped] = await Promise.all([leaseAll(store, 'n', T0), store.queue.drop(job.id, new Date(T0))]);
    expect(leased.length + (dropped.result === 'ok' ? 1 : 0)).toBe(1);
    expect(dropped.result).toBe(leased.length === 1 ? 'leased' : 'ok');
  });
});

eachEngine("QueuePort: an account's queue", (ctx) => {
  it("walks the account's queued messages oldest first with their open jobs", async () => {
    const store = ctx.store;
    const first = await queueAt(store, T0, ['a@one.test', 'b@two.test']);
    const second = await queueAt(store, T0 + 1, ['c@two.test']);
    const walk = await store.queue.walkAccount({ accountId: ACCOUNT, afterSeq: 0, limit: 10, scanLimit: 100 });
    expect(walk.messages.map((m) => m.accepted.messageId)).toEqual([first, second]);
    expect(walk.messages[0].jobs.map((j) => j.domain).sort()).toEqual(['one.test', 'two.test']);
    expect(walk).toMatchObject({ scanned: 2, reachedEnd: true, lastSeq: walk.messages[1].seq });
    const two = await store.queue.walkAccount({ accountId: ACCOUNT, domain: 'two.test', afterSeq: walk.messages[0].seq, limit: 10, scanLimit: 100 });
    expect(two.messages.map((m) => m.accepted.messageId)).toEqual([second]);
    expect((await store.queue.walkAccount({ accountId: 'other', afterSeq: 0, limit: 10, scanLimit: 100 })).messages).toEqual([]);
  });

  it("retries a message's queued jobs and leaves its leased one", async () => {
    const store = ctx.store;
    const id = await queueAt(store, T0, ['a@one.test', 'b@two.test']);
    await leaseAll(store, 'n', T0, 1);
    const out = await store.queue.retryMessage({ messageId: id, nowMs: T0 + MINUTE });
    expect(out).toMatchObject({ matched: 2, changed: 1, leased: 1, preparing: false });
    expect(out.jobs.find((j) => j.state === 'queued')?.dueAt).toBe(new Date(T0 + MINUTE).toISOString());
    for (const j of out.jobs) expect(j).not.toHaveProperty('leaseGeneration');
  });

  it("drops none of a message's jobs while one of them is leased, and all of them once none is", async () => {
    const store = ctx.store;
    const id = await queueAt(store, T0, ['a@one.test', 'b@two.test']);
    const [leased] = await leaseAll(store, 'n', T0, 1);
    expect(await store.queue.dropMessage({ messageId: id, now: new Date(T0) })).toMatchObject({ matched: 2, changed: 0, leased: 1 });
    await store.queue.release(leased, T0);
    const out = await store.queue.dropMessage({ messageId: id, now: new Date(T0) });
    expect(out).toMatchObject({ matched: 2, changed: 2, leased: 0 });
    expect(out.jobs.every((j) => j.state === 'done')).toBe(true);
  });

  it('drops to one destination only, and matches nothing for a destination without a job', async () => {
    const store = ctx.store;
    const id = await queueAt(store, T0, ['a@one.test', 'b@two.test']);
    expect(await store.queue.dropMessage({ messageId: id, domain: 'one.test', now: new Date(T0) })).toMatchObject({ matched: 1, changed: 1 });
    expect(await store.queue.retryMessage({ messageId: id, domain: 'three.test', nowMs: T0 })).toMatchObject({ matched: 0, changed: 0 });
  });
});

