/**
 * Retention and unfinished messages (RetentionPort.sweepBatch), once per engine: nothing of a
 * message that is not finished leaves the store, whatever its age. A message scheduled beyond
 * retention.days, one deferred and retrying for longer, one still waiting to be composed keep
 * their events, their list entry and their record; once finished they stay retention.days more
 * (counted from the end of their delivery), then go. The log's floor waits at the accepted event
 * of such a message, so the events after it wait too: for as long as a message can stay
 * unfinished on schedule and retries, after which a stuck one is parked as before.
 */
import { expect, it } from 'vitest';
import type { AttemptResult } from '../../src/domain/delivery-result.js';
import type { LeasedJob } from '../../src/store/port/queue.js';
import { ACCOUNT, queueMessage } from '../support/delivery.js';
import { eachEngine } from './engines.js';
import { accepted, ACCOUNT as CONTRACT_ACCOUNT } from './submissions.js';

const DAY = 86_400_000;
const RETENTION = 7 * DAY;
const T0 = Date.UTC(2026, 11, 1, 8, 0, 0);
const iso = (ms: number) => new Date(ms).toISOString();

function result(recipients: readonly string[], outcome: 'delivered' | 'deferred'): AttemptResult {
  const [smtpCode, response] = outcome === 'delivered' ? [250, '250 2.0.0 OK'] : [451, '451 4.3.0 later'];
  return { recipients: recipients.map((recipient) => ({ recipient, outcome, category: 'other', phase: 'data', smtpCode, response })), tls: true, mx: 'mx.test', response };
}

eachEngine('retention of unfinished messages', (ctx) => {
  /** One sweep as the sweeper runs it at nowMs: every batch until no more (`longestUnfinishedMs`: RetentionSweeper's, none by default). */
  async function sweepAt(nowMs: number, longestUnfinishedMs?: number) {
    const cutoffMs = nowMs - RETENTION;
    for (;;) {
      const r = await ctx.store.retention.sweepBatch({ cutoffMs, batch: 100, ...(longestUnfinishedMs !== undefined && { holdFromMs: cutoffMs - longestUnfinishedMs }) });
      if (!r.more) return;
    }
  }

  async function attempt(nowMs: number, outcome: 'delivered' | 'deferred', nextDueAtMs?: number): Promise<LeasedJob> {
    const [job] = (await ctx.store.queue.lease({ owner: 'n', nowMs, max: 10, leaseMs: 60_000 })).jobs;
    expect(job).toBeDefined();
    await ctx.store.queue.recordOutcomes([{ job, result: result(job.recipients, outcome), attemptAt: new Date(nowMs), nextDueAtMs }]);
    return job;
  }

  const types = async (id: string) => (await ctx.store.events.ofMessage(id)).map((e) => e.eventType);
  const listed = async (accountId: string) =>
    (await ctx.store.events.messagePage({ accountId }, { afterSeq: 0, limit: 100 })).results.map((r) => r.accepted.messageId);

  it('keeps a message scheduled beyond retention whole until it is delivered, then sweeps it retention.days after', async () => {
    const old = await queueMessage(ctx.store, { to: ['old@one.test'], now: new Date(T0 - DAY) });
    await attempt(T0 - DAY, 'delivered');
    const m = accepted({ to: ['ann@two.test'], scheduledAt: iso(T0 + 20 * DAY), createdAt: iso(T0) });
    const id = m.record.id;
    await ctx.store.messages.commit({ messages: [m], now: new Date(T0) });

    await sweepAt(T0 + 10 * DAY);
    expect(await ctx.store.messages.get(old)).toBeUndefined();
    expect(await types(old)).toEqual([]);
    expect(await types(id)).toEqual(['accepted', 'processed']);
    expect(await listed(CONTRACT_ACCOUNT)).toEqual([id]);
    expect(await ctx.store.messages.get(id)).toMatchObject({ status: 'queued', openJobs: 1 });
    expect(await ctx.store.messages.body(id)).toBeDefined();

    await attempt(T0 + 20 * DAY, 'delivered');
    await sweepAt(T0 + 26 * DAY);
    expect(await types(id)).toEqual(['accepted', 'processed', 'delivered']);
    expect(await listed(CONTRACT_ACCOUNT)).toEqual([id]);
    expect(await ctx.store.messages.get(id)).toMatchObject({ status: 'sent', openJobs: 0, finishedAt: iso(T0 + 20 * DAY) });

    await sweepAt(T0 + 27 * DAY + 1);
    expect(await types(id)).toEqual([]);
    expect(await listed(CONTRACT_ACCOUNT)).toEqual([]);
    expect(await ctx.store.messages.get(id)).toBeUndefined();
    expect(await ctx.store.queue.jobsOfMessage(id)).toEqual([]);
    expect(await ctx.store.retention.isPending(id)).toBe(false);
  });

  it('keeps a message deferred and retrying for longer than retention, and what was recorded after it, until retention.days after its end', async () => {
    const id = await queueMessage(ctx.store, { to: ['bob@slow.test'], now: new Date(T0) });
    await attempt(T0, 'deferred', T0 + 9 * DAY);
    const later = await queueMessage(ctx.store, { to: ['cy@fast.test'], now: new Date(T0 + DAY) });
    await attempt(T0 + DAY, 'delivered');

    await sweepAt(T0 + 10 * DAY);
    expect(await ctx.store.messages.get(id)).toMatchObject({ status: 'queued', openJobs: 1 });
    expect(await types(id)).toEqual(['accepted', 'processed']);
    expect(await types(later)).toEqual(['accepted', 'processed', 'delivered']);
    expect(await listed(ACCOUNT)).toEqual([id, later]);

    await attempt(T0 + 9 * DAY, 'delivered');
    await sweepAt(T0 + 16 * DAY);
    expect(await types(id)).toEqual(['accepted', 'processed', 'delivered']);
    expect(await listed(ACCOUNT)).toEqual([id, later]);

    await sweepAt(T0 + 16 * DAY + 1);
    expect(await types(id)).toEqual([]);
    expect(await types(later)).toEqual([]);
    expect(await listed(ACCOUNT)).toEqual([]);
    expect(await ctx.store.messages.get(id)).toBeUndefined();
    expect(await ctx.store.messages.get(later)).toBeUndefined();
  });

  it('holds the floor no longer than a message can stay unfinished on schedule and retries: a stuck one is parked, and the events after it go', async () => {
    const stuck = await queueMessage(ctx.store, { to: ['dee@stuck.test'], now: new Date(T0) });
    // Due again long after any give-up time: as jobs that wait for a sending source that never comes.
    await attempt(T0, 'deferred', T0 + 1000 * DAY);
    const later = await queueMessage(ctx.store, { to: ['eve@fast.test'], now: new Date(T0 + DAY) });
    await attempt(T0 + DAY, 'delivered');
    const longest = 5 * DAY; // say 2 days of schedule window and 3 of queue age

    // Within the window the stuck message holds the floor, and the later one waits behind it.
    await sweepAt(T0 + RETENTION + longest, longest);
    expect(await types(stuck)).toEqual(['accepted', 'processed']);
    expect(await types(later)).toEqual(['accepted', 'processed', 'delivered']);

    // Past it, the stuck message is parked (record, body and job kept for its delivery) and the floor moves on.
    await sweepAt(T0 + RETENTION + longest + 2 * DAY + 1, longest);
    expect(await types(stuck)).toEqual([]);
    expect(await types(later)).toEqual([]);
    expect(await ctx.store.messages.get(stuck)).toMatchObject({ status: 'queued', openJobs: 1 });
    expect(await ctx.store.retention.isPending(stuck)).toBe(true);
    expect(await ctx.store.messages.get(later)).toBeUndefined();
  });

  it('keeps a sandbox message still waiting to be composed, whatever its age', async () => {
    const m = accepted({ sandbox: true, compose: { template: 'request' }, createdAt: iso(T0) });
    const id = m.record.id;
    await ctx.store.messages.commit({ messages: [m], now: new Date(T0) });

    await sweepAt(T0 + 10 * DAY);
    expect(await types(id)).toEqual(['accepted', 'processed']);
    expect(await listed(CONTRACT_ACCOUNT)).toEqual([id]);
    expect(await ctx.store.messages.get(id)).toBeDefined();
  });
});
