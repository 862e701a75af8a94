/**
 * Sandbox messages and scheduled sends (issue 34; domain/sandbox-outcome.ts): one sent now gets
 * its simulated outcomes in its commit, as before; one scheduled for later waits like a live one
 * (jobs due at its time, its simulated bounces kept on its record, no outcome, no suppression
 * yet), and its simulated outcome recorded at its time ends it as any attempt does. A broadcast's
 * scheduled sandbox messages count as finished only then.
 */
import { expect, it } from 'vitest';
import { simulatedAttempt } from '../../src/domain/sandbox-outcome.js';
import { accepted, broadcast, CHANNEL, entries } from './submissions.js';
import { eachEngine } from './engines.js';

const T0 = Date.UTC(2026, 11, 1, 8, 0, 0);
const HOUR = 3_600_000;
const LEASE_MS = 60_000;
const iso = (ms: number) => new Date(ms).toISOString();
const BOUNCE = 'x@bounce.postrider.invalid';

eachEngine('sandbox messages and scheduled sends', (ctx) => {
  const types = async (id: string) => (await ctx.store.events.ofMessage(id)).map((e) => e.eventType);

  it('simulates a sandbox message sent now in its commit: sent, no job, delivered and bounced events, the bounce suppressed', async () => {
    const m = accepted({ sandbox: true, to: ['ann@example.org', BOUNCE], simulatedBounces: [BOUNCE], createdAt: iso(T0) });
    await ctx.store.messages.commit({ messages: [m], now: new Date(T0) });
    expect(await ctx.store.messages.get(m.record.id)).toMatchObject({ status: 'sent', openJobs: 0 });
    expect((await ctx.store.messages.get(m.record.id))?.simulatedBounces).toBeUndefined();
    expect(await ctx.store.queue.jobsOfMessage(m.record.id)).toEqual([]);
    expect(await types(m.record.id)).toEqual(['accepted', 'processed', 'delivered', 'bounced']);
    expect(await ctx.store.suppressions.is(CHANNEL, 'transactional', BOUNCE)).toBe(true);
  });

  it('simulates a sandbox message sent now that is to be composed once it is finished, not in its commit', async () => {
    const m = accepted({ sandbox: true, compose: { template: 'request' }, to: ['ann@example.org', BOUNCE], simulatedBounces: [BOUNCE], createdAt: iso(T0) });
    const id = m.record.id;
    await ctx.store.messages.commit({ messages: [m], now: new Date(T0) });
    expect(await ctx.store.messages.get(id)).toMatchObject({ status: 'sent', openJobs: 0 });
    expect(await ctx.store.queue.jobsOfMessage(id)).toEqual([]);
    expect(await types(id)).toEqual(['accepted', 'processed']);
    expect(await ctx.store.suppressions.is(CHANNEL, 'transactional', BOUNCE)).toBe(false);

    const body = Buffer.from('Subject: composed\r\n\r\nhi\r\n');
    expect(await ctx.store.messages.storeFinished([{ messageId: id, body, composed: true, record: { size: body.length } }])).toBe(0);
    expect(await types(id)).toEqual(['accepted', 'processed', 'delivered', 'bounced']);
    const events = await ctx.store.events.ofMessage(id);
    expect(events.find((e) => e.eventType === 'delivered')).toMatchObject({ recipients: ['ann@example.org'], details: { simulated: true, smtpCode: 250 } });
    expect(events.find((e) => e.eventType === 'bounced')).toMatchObject({ recipients: [BOUNCE], details: { simulated: true, bounceType: 'hard' } });
    expect(await ctx.store.suppressions.is(CHANNEL, 'transactional', BOUNCE)).toBe(true);
    expect(await ctx.store.messages.get(id)).not.toHaveProperty('simulateWhenFinished');
    // Stored again (a retry that raced): nothing more is recorded.
    await ctx.store.messages.storeFinished([{ messageId: id, body, composed: true }]);
    expect(await types(id)).toEqual(['accepted', 'processed', 'delivered', 'bounced']);
  });

  it('ends a sandbox message sent now that cannot be composed with its failure only: no simulated delivery, no simulated bounce', async () => {
    const m = accepted({ sandbox: true, compose: { template: 'request' }, to: ['ann@example.org', BOUNCE], simulatedBounces: [BOUNCE], createdAt: iso(T0) });
    const id = m.record.id;
    await ctx.store.messages.commit({ messages: [m], now: new Date(T0) });
    const failure = { reason: 'the composed message is too large', category: 'message_too_large', enhancedCode: '5.3.4' } as const;
    expect((await ctx.store.messages.endUnfinished({ messageId: id, failure })).sort()).toEqual(['ann@example.org', BOUNCE].sort());
    const events = await ctx.store.events.ofMessage(id);
    expect(events.map((e) => e.eventType)).toEqual(['accepted', 'processed', 'bounced', 'bounced']);
    expect(events.filter((e) => e.eventType === 'bounced').every((e) => e.details.simulated === undefined && e.details.category === 'message_too_large')).toBe(true);
    expect(await ctx.store.suppressions.is(CHANNEL, 'transactional', BOUNCE)).toBe(false);
  });

  it('simulates in the commit a sandbox message whose scheduled time is already past (within the minute taken)', async () => {
    const m = accepted({ sandbox: true, to: ['ann@example.org'], scheduledAt: iso(T0 - 30_000), createdAt: iso(T0) });
    await ctx.store.messages.commit({ messages: [m], now: new Date(T0) });
    expect(await ctx.store.messages.get(m.record.id)).toMatchObject({ status: 'sent', openJobs: 0 });
    expect(await types(m.record.id)).toEqual(['accepted', 'processed', 'delivered']);
  });

  it('queues a sandbox message scheduled for later with jobs due at its time, and records its simulated outcome then', async () => {
    const m = accepted({ sandbox: true, to: ['ann@example.org', BOUNCE], simulatedBounces: [BOUNCE], scheduledAt: iso(T0 + HOUR), createdAt: iso(T0) });
    const id = m.record.id;
    await ctx.store.messages.commit({ messages: [m], now: new Date(T0) });
    expect(await ctx.store.messages.get(id)).toMatchObject({ status: 'queued', openJobs: 2, simulatedBounces: [BOUNCE] });
    expect((await ctx.store.queue.jobsOfMessage(id)).map((j) => j.dueAt)).toEqual([iso(T0 + HOUR), iso(T0 + HOUR)]);
    expect(await types(id)).toEqual(['accepted', 'processed']);
    expect(await ctx.store.suppressions.is(CHANNEL, 'transactional', BOUNCE)).toBe(false);
    expect((await ctx.store.queue.lease({ owner: 'n', nowMs: T0 + HOUR - 1, max: 10, leaseMs: LEASE_MS })).jobs).toEqual([]);

    const { jobs } = await ctx.store.queue.lease({ owner: 'n', nowMs: T0 + HOUR, max: 10, leaseMs: LEASE_MS });
    expect(jobs).toHaveLength(2);
    const message = (await ctx.store.messages.get(id))!;
    const outs = await ctx.store.queue.recordOutcomes(jobs.map((job) => ({ job, result: simulatedAttempt(job.recipients, message.simulatedBounces), attemptAt: new Date(T0 + HOUR) })));
    expect(outs.flatMap((o) => [...o.delivered, ...o.bounced]).sort()).toEqual(['ann@example.org', BOUNCE].sort());
    expect(await ctx.store.messages.get(id)).toMatchObject({ status: 'sent', openJobs: 0 });
    const events = await ctx.store.events.ofMessage(id);
    expect(events.map((e) => e.eventType).slice(0, 2)).toEqual(['accepted', 'processed']);
    const delivered = events.find((e) => e.eventType === 'delivered')!;
    const bounced = events.find((e) => e.eventType === 'bounced')!;
    expect(delivered).toMatchObject({ timestamp: iso(T0 + HOUR), recipients: ['ann@example.org'], details: { simulated: true, smtpCode: 250, response: '250 2.0.0 OK (sandbox)' } });
    expect(delivered.details).not.toHaveProperty('mx');
    expect(bounced).toMatchObject({ recipients: [BOUNCE], details: { simulated: true, bounceType: 'hard', smtpCode: 550, enhancedCode: '5.1.1', response: '550 5.1.1 simulated bounce (sandbox)' } });
    expect(await ctx.store.suppressions.is(CHANNEL, 'transactional', BOUNCE)).toBe(true);
  });

  it('cancels a scheduled sandbox message with no outcome and no suppression', async () => {
    const m = accepted({ sandbox: true, to: [BOUNCE], simulatedBounces: [BOUNCE], scheduledAt: iso(T0 + HOUR), createdAt: iso(T0) });
    await ctx.store.messages.commit({ messages: [m], now: new Date(T0) });
    expect(await ctx.store.messages.cancelMessage(m.record.id, new Date(T0 + 1_000))).toMatchObject({ status: 'done' });
    expect(await types(m.record.id)).toEqual(['accepted', 'processed', 'canceled']);
    expect(await ctx.store.suppressions.is(CHANNEL, 'transactional', BOUNCE)).toBe(false);
  });

  it("counts a broadcast's scheduled sandbox messages finished at their outcome, its others at the commit", async () => {
    const b = broadcast({ total: 2 });
    await ctx.store.broadcasts.accept({ record: b, entries: entries(2) });
    const later = accepted({ sandbox: true, broadcastId: b.id, to: ['ann@example.org'], scheduledAt: iso(T0 + HOUR), createdAt: iso(T0) });
    const now = accepted({ sandbox: true, broadcastId: b.id, to: ['bob@example.org'], createdAt: iso(T0) });
    await ctx.store.messages.commit({ messages: [later, now], now: new Date(T0), broadcastProgress: { broadcastId: b.id, from: 0, cursor: 2, skipped: 0, failures: [], suppressed: [] } });
    expect((await ctx.store.broadcasts.counters(b.id)).finished).toBe(1);
    const { jobs } = await ctx.store.queue.lease({ owner: 'n', nowMs: T0 + HOUR, max: 10, leaseMs: LEASE_MS });
    await ctx.store.queue.recordOutcomes(jobs.map((job) => ({ job, result: simulatedAttempt(job.recipients, []), attemptAt: new Date(T0 + HOUR) })));
    expect((await ctx.store.broadcasts.counters(b.id)).finished).toBe(2);
  });
});
