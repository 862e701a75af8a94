/** The queue's store verbs (QueuePort) on a real store, and the dispatcher's group commit of outcomes. */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { AttemptResult, RecipientResult } from '../../src/domain/delivery-result.js';
import type { DeliveryJob } from '../../src/domain/types.js';
import type { LeasedJob, LeaseRequest, RecordOutcomeInput } from '../../src/queue/delivery-queue.js';
import { DeliveryQueue } from '../../src/queue/delivery-queue.js';
import { CHANNEL, openTestStore, queueMessage, type TestStore } from '../support/delivery.js';

let t: TestStore;
const T0 = Date.UTC(2025, 0, 6, 9, 0, 0);

beforeEach(async () => {
  t = await openTestStore();
});

afterEach(async () => {
  await t.close();
});

function rcpt(recipient: string, r: Partial<RecipientResult>): RecipientResult {
  return { recipient, outcome: 'delivered', category: 'delivered', phase: 'message', smtpCode: 250, response: '250 2.0.0 OK', ...r };
}

function result(recipients: RecipientResult[]): AttemptResult {
  return { recipients, mx: 'mx.example.test', address: '127.0.0.2', tls: true, response: recipients[0].response };
}

const OWNER = 'local';

function lease(o: LeaseRequest) {
  return t.store.queue.lease({ owner: OWNER, ...o });
}

async function leaseOne(nowMs = T0): Promise<LeasedJob> {
  const { jobs } = await lease({ nowMs, max: 1, leaseMs: 60_000 });
  expect(jobs).toHaveLength(1);
  return jobs[0];
}

async function recordOutcome(input: RecordOutcomeInput) {
  const [out] = await t.store.queue.recordOutcomes([input]);
  return out;
}

async function eventsOf(id: string) {
  return t.store.events.ofMessage(id);
}

describe('QueuePort.lease', () => {
  it('leases only jobs that are due, oldest first, at most max', async () => {
    await queueMessage(t.store, { to: ['a@one.test'], now: new Date(T0 - 2000) });
    await queueMessage(t.store, { to: ['b@two.test'], now: new Date(T0 - 1000) });
    await queueMessage(t.store, { to: ['c@three.test'], now: new Date(T0 + 60_000) });
    const { jobs } = await lease({ nowMs: T0, max: 1, leaseMs: 60_000 });
    expect(jobs.map((j) => j.domain)).toEqual(['one.test']);
    expect(jobs[0]).toMatchObject({ state: 'leased', leaseUntil: new Date(T0 + 60_000).toISOString() });
    expect(await t.store.queue.counts(T0)).toEqual({ queued: 2, dueNow: 1, leased: 1 });
    expect(await t.store.queue.nextDueAfter(T0)).toBe(T0 + 60_000);
  });

  it('leaves a job due when accept refuses it and leases the ones behind it', async () => {
    await queueMessage(t.store, { to: ['a@busy.test'], now: new Date(T0 - 2000) });
    await queueMessage(t.store, { to: ['b@free.test'], now: new Date(T0 - 1000) });
    const res = await lease({ nowMs: T0, max: 5, leaseMs: 60_000, accept: (j) => j.domain !== 'busy.test' });
    expect(res.jobs.map((j) => j.domain)).toEqual(['free.test']);
    expect(res.skipped).toBe(1);
    expect((await t.store.queue.list({ state: 'queued' })).map((j) => j.domain)).toEqual(['busy.test']);
  });

  it('skips a busy domain from the due index alone, without reading its jobs', async () => {
    for (let i = 0; i < 5; i++) await queueMessage(t.store, { to: [`a${i}@busy.test`], now: new Date(T0 - 5000 + i) });
    await queueMessage(t.store, { to: ['b@free.test'], now: new Date(T0 - 1000) });
    // Every job the scan reads (all are queued) reaches `accept`: what it sees is what was read.
    const read: string[] = [];
    const accept = (job: DeliveryJob) => {
      read.push(job.domain);
      return true;
    };
    const res = await lease({ nowMs: T0, max: 5, leaseMs: 60_000, accept, acceptDomain: (d) => d !== 'busy.test' });
    expect(res.jobs.map((j) => j.domain)).toEqual(['free.test']);
    expect(res.skipped).toBe(5);
    expect(read).toEqual(['free.test']);
  });

  it('resumes a truncated scan after the last key it looked at', async () => {
    for (let i = 0; i < 4; i++) await queueMessage(t.store, { to: [`x@busy${i}.test`], now: new Date(T0 - 5000 + i) });
    await queueMessage(t.store, { to: ['y@free.test'], now: new Date(T0 - 100) });
    const accept = (j: DeliveryJob) => j.domain === 'free.test';
    const first = await lease({ nowMs: T0, max: 1, leaseMs: 60_000, accept, scanLimit: 2 });
    expect(first.jobs).toEqual([]);
    expect(first.resumeAfter).toBeDefined();
    const second = await lease({ nowMs: T0, max: 1, leaseMs: 60_000, accept, scanLimit: 3, after: first.resumeAfter });
    expect(second.jobs.map((j) => j.domain)).toEqual(['free.test']);
  });
});

describe('QueuePort.recordOutcomes', () => {
  it('records delivered and hard-bounced recipients, suppresses the bounce and marks the message sent', async () => {
    const id = await queueMessage(t.store, { to: ['ok@example.test', 'gone@example.test'], now: new Date(T0) });
    const job = await leaseOne();
    const out = await recordOutcome({
      job,
      attemptAt: new Date(T0 + 1000),
      result: result([
        rcpt('ok@example.test', {}),
        rcpt('gone@example.test', { outcome: 'bounced', bounceType: 'hard', category: 'unknown_user', phase: 'rcpt', smtpCode: 550, enhancedCode: '5.1.1', response: '550 5.1.1 User unknown' }),
      ]),
    });
    expect(out).toMatchObject({ status: 'done', delivered: ['ok@example.test'], bounced: ['gone@example.test'], suppressed: ['gone@example.test'] });
    const events = (await eventsOf(id)).filter((e) => e.eventType === 'delivered' || e.eventType === 'bounced');
    expect(events.map((e) => [e.eventType, e.recipients, e.details])).toEqual([
      ['delivered', ['ok@example.test'], { smtpCode: 250, response: '250 2.0.0 OK', mx: 'mx.example.test', tls: true, attempt: 1 }],
      ['bounced', ['gone@example.test'], { smtpCode: 550, enhancedCode: '5.1.1', response: '550 5.1.1 User unknown', mx: 'mx.example.test', tls: true, attempt: 1, bounceType: 'hard', category: 'unknown_user' }],
    ]);
    expect(await t.store.suppressions.is(CHANNEL, 'transactional', 'gone@example.test')).toBe(true);
    expect(await t.store.messages.get(id)).toMatchObject({ status: 'sent', openJobs: 0 });
    expect(await t.store.queue.get(job.id)).toMatchObject({ state: 'done', attempts: 1 });
    // The history names the reply that made the outcome, not the other recipient's 250.
    expect((await t.store.queue.get(job.id))?.history).toMatchObject([{ outcome: 'bounced', smtpCode: 550, enhancedCode: '5.1.1', response: '550 5.1.1 User unknown' }]);
    expect(await t.store.queue.counts(T0)).toEqual({ queued: 0, dueNow: 0, leased: 0 });
  });

  it('re-queues only the deferred recipients, keeps the attempt in the history and writes no event for it', async () => {
    const id = await queueMessage(t.store, { to: ['ok@example.test', 'later@example.test'], now: new Date(T0) });
    const job = await leaseOne();
    const out = await recordOutcome({
      job,
      attemptAt: new Date(T0 + 1000),
      nextDueAtMs: T0 + 301_000,
      result: result([rcpt('ok@example.test', {}), rcpt('later@example.test', { outcome: 'deferred', category: 'greylisted', phase: 'rcpt', smtpCode: 451, enhancedCode: '4.7.1', response: '451 4.7.1 Greylisting in action' })]),
    });
    expect(out.status).toBe('requeued');
    expect(await t.store.queue.get(job.id)).toMatchObject({
      state: 'queued',
      attempts: 1,
      recipients: ['later@example.test'],
      dueAt: new Date(T0 + 301_000).toISOString(),
      history: [{ outcome: 'deferred', smtpCode: 451, enhancedCode: '4.7.1', response: '451 4.7.1 Greylisting in action', mx: 'mx.example.test', tls: true }],
    });
    expect((await t.store.queue.get(job.id))?.leaseUntil).toBeUndefined();
    expect(await t.store.messages.get(id)).toMatchObject({ status: 'queued', openJobs: 1 });
    expect((await eventsOf(id)).map((e) => e.eventType)).toEqual(['accepted', 'processed', 'delivered']);
  });

  it('bounces deferred recipients with reason "expired" when no next attempt is given', async () => {
    const id = await queueMessage(t.store, { to: ['late@example.test'], now: new Date(T0) });
    const job = await leaseOne();
    const out = await recordOutcome({
      job,
      attemptAt: new Date(T0 + 1000),
      result: result([rcpt('late@example.test', { outcome: 'deferred', category: 'connection', phase: 'connect', smtpCode: undefined, response: 'ECONNREFUSED' })]),
    });
    expect(out).toMatchObject({ status: 'done', expired: ['late@example.test'] });
    const bounce = (await eventsOf(id)).find((e) => e.eventType === 'bounced');
    expect(bounce?.details).toMatchObject({ reason: 'expired', bounceType: 'soft', response: 'ECONNREFUSED' });
    expect(await t.store.suppressions.is(CHANNEL, 'transactional', 'late@example.test')).toBe(false);
  });

  it('refuses an outcome from a lease that is no longer current', async () => {
    await queueMessage(t.store, { to: ['a@example.test'], now: new Date(T0) });
    const job = await leaseOne();
    await t.store.queue.recover({ nowMs: T0 + 120_000 });
    const out = await recordOutcome({ job, attemptAt: new Date(T0 + 121_000), result: result([rcpt('a@example.test', {})]) });
    expect(out.status).toBe('stale');
    expect(await t.store.queue.get(job.id)).toMatchObject({ state: 'queued', attempts: 0 });
  });
});

describe('QueuePort.recover', () => {
  it('puts expired leases back to due now and leaves live ones alone', async () => {
    await queueMessage(t.store, { to: ['a@example.test'], now: new Date(T0) });
    const job = await leaseOne();
    expect(await t.store.queue.recover({ nowMs: T0 + 30_000 })).toBe(0);
    expect(await t.store.queue.recover({ nowMs: T0 + 60_000 })).toBe(1);
    expect(await t.store.queue.get(job.id)).toMatchObject({ state: 'queued', dueAt: new Date(T0 + 60_000).toISOString() });
  });

  it('recovers every lease of the starting node at its start, expired or not', async () => {
    await queueMessage(t.store, { to: ['a@example.test'], now: new Date(T0) });
    await leaseOne();
    expect(await t.store.queue.recover({ nowMs: T0 + 1, owner: OWNER })).toBe(1);
    expect(await t.store.queue.counts(T0 + 1)).toMatchObject({ dueNow: 1, leased: 0 });
  });
});

describe('operator verbs', () => {
  it('retries a queued job now and refuses a leased one', async () => {
    await queueMessage(t.store, { to: ['a@one.test'], now: new Date(T0 + 3_600_000) });
    const [job] = await t.store.queue.list();
    expect((await t.store.queue.retry(job.id, T0)).result).toBe('ok');
    expect((await t.store.queue.get(job.id))?.dueAt).toBe(new Date(T0).toISOString());
    await leaseOne();
    expect((await t.store.queue.retry(job.id, T0)).result).toBe('leased');
    expect((await t.store.queue.retry('nope', T0)).result).toBe('not_found');
  });

  it('drops a queued job as a bounced event with the operator as reason', async () => {
    const id = await queueMessage(t.store, { to: ['a@one.test', 'b@one.test'], now: new Date(T0) });
    const [job] = await t.store.queue.jobsOfMessage(id);
    expect((await t.store.queue.drop(job.id, new Date())).result).toBe('ok');
    const bounces = (await eventsOf(id)).filter((e) => e.eventType === 'bounced');
    expect(bounces.map((e) => [e.recipients, e.details.reason])).toEqual([
      [['a@one.test'], 'dropped by operator'],
      [['b@one.test'], 'dropped by operator'],
    ]);
    expect(await t.store.messages.get(id)).toMatchObject({ status: 'sent', openJobs: 0 });
    expect((await t.store.queue.drop(job.id, new Date())).result).toBe('done');
  });
});

describe('DeliveryQueue.record (group commit)', () => {
  it('records outcomes that finish together in one transaction, each with its own result, and a failing one alone', async () => {
    for (const d of ['one', 'two', 'three', 'four']) await queueMessage(t.store, { to: [`a@${d}.test`], now: new Date(T0 - 1000) });
    const { jobs } = await lease({ nowMs: T0, max: 4, leaseMs: 60_000 });
    expect(jobs).toHaveLength(4);
    const queue = new DeliveryQueue(t.store, OWNER);
    const at = new Date(T0 + 1000);
    const stale = { ...jobs[1], leaseUntil: new Date(T0).toISOString() }; // not the lease the store holds
    // A result the store cannot record (a bug): it must fail alone, not take the others with it.
    const broken = { ...result([rcpt('a@three.test', {})]), recipients: null } as unknown as AttemptResult;
    const settled = await Promise.allSettled([
      queue.record({ job: jobs[0], attemptAt: at, result: result([rcpt('a@one.test', {})]) }),
      queue.record({ job: stale, attemptAt: at, result: result([rcpt('a@two.test', {})]) }),
      queue.record({ job: jobs[2], attemptAt: at, result: broken }),
      queue.record({ job: jobs[3], attemptAt: at, result: result([rcpt('a@four.test', { outcome: 'deferred', category: 'other', smtpCode: 451, response: '451 later' })]), nextDueAtMs: T0 + 300_000 }),
    ]);
    expect(settled.map((s) => (s.status === 'fulfilled' ? s.value.status : 'rejected'))).toEqual(['done', 'stale', 'rejected', 'requeued']);
    // Each acknowledged outcome is in the store once; the stale and the failed ones wrote nothing.
    expect(await t.store.queue.get(jobs[0].id)).toMatchObject({ state: 'done', attempts: 1 });
    expect((await eventsOf(jobs[0].messageId)).filter((e) => e.eventType === 'delivered')).toHaveLength(1);
    expect(await t.store.queue.get(jobs[1].id)).toMatchObject({ state: 'leased', attempts: 0 });
    expect(await t.store.queue.get(jobs[2].id)).toMatchObject({ state: 'leased', attempts: 0 });
    expect(await t.store.queue.get(jobs[3].id)).toMatchObject({ state: 'queued', attempts: 1, dueAt: new Date(T0 + 300_000).toISOString() });
  });
});
