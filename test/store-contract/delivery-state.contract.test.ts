/**
 * The contract of the state delivery keeps between attempts (store/port/delivery-state.ts:
 * TlsRptPort, MtaStsPort, DnsFailuresPort) and of RetentionPort, once per engine; the atomic
 * rules under racing callers: TLS-RPT counts merged by concurrent flushes lose nothing, a day's
 * report is created once, concurrent DNS failures each count and cross the threshold once.
 */
import { expect, it } from 'vitest';
import type { StsPolicy } from '../../src/mta-sts/policy.js';
import type { TlsRptReport } from '../../src/store/port/delivery-state.js';
import type { PolicyCounts } from '../../src/domain/tls-rpt.js';
import { ACCOUNT, queueMessage } from '../support/delivery.js';
import { eachEngine } from './engines.js';

const DAY_MS = 86_400_000;
const T0 = Date.parse('2025-01-06T09:00:00.000Z');

function counts(o: Partial<PolicyCounts> & { success?: number; failed?: number }): PolicyCounts {
  return {
    day: o.day ?? '2025-01-05',
    policyDomain: o.policyDomain ?? 'one.test',
    policy: o.policy ?? { type: 'sts', string: ['version: STSv1', 'mode: enforce'], mxHost: 'mx.one.test' },
    success: o.success ?? 0,
    failures: o.failed ? [{ failure: { type: 'certificate-expired', receivingMxHostname: 'mx.one.test', receivingIp: '192.0.2.1' }, count: o.failed }] : [],
  };
}

function report(o: Partial<TlsRptReport> = {}): TlsRptReport {
  return { reportId: 'r-1', gzip: new Uint8Array([31, 139, 8]), pending: ['https://rua.test/'], attempts: 0, nextAtMs: T0, ...o };
}

eachEngine('TlsRptPort', (ctx) => {
  it('sums counts per day, domain and policy, each failure detail apart', async () => {
    const store = ctx.store;
    await store.tlsRpt.addCounts([counts({ success: 3 }), counts({ failed: 1 }), counts({ policyDomain: 'two.test', success: 1 })]);
    await store.tlsRpt.addCounts([counts({ success: 2, failed: 4 })]);
    await store.tlsRpt.addCounts([]);
    const [one] = await store.tlsRpt.counts('2025-01-05', 'one.test');
    expect(one).toMatchObject({ day: '2025-01-05', policyDomain: 'one.test', success: 5, failures: [expect.objectContaining({ count: 5 })] });
    expect(await store.tlsRpt.counts('2025-01-05', 'two.test')).toEqual([expect.objectContaining({ success: 1, failures: [] })]);
    expect(await store.tlsRpt.counts('2025-01-04', 'one.test')).toEqual([]);
  });

  it('loses no count when many flushes merge into the same day at once', async () => {
    const store = ctx.store;
    await Promise.all(Array.from({ length: 20 }, () => store.tlsRpt.addCounts([counts({ success: 1, failed: 2 })])));
    const [one] = await store.tlsRpt.counts('2025-01-05', 'one.test');
    expect(one.success).toBe(20);
    expect(one.failures).toEqual([expect.objectContaining({ count: 40 })]);
  });

  it('lists days with counts and no report, before a day', async () => {
    const store = ctx.store;
    await store.tlsRpt.addCounts([counts({ day: '2025-01-04', success: 1 }), counts({ day: '2025-01-05', success: 1 }), counts({ day: '2025-01-06', success: 1 })]);
    expect(await store.tlsRpt.unreportedDays('2025-01-06')).toEqual([
      { day: '2025-01-04', policyDomain: 'one.test' },
      { day: '2025-01-05', policyDomain: 'one.test' },
    ]);
    expect(await store.tlsRpt.createReport('2025-01-04', 'one.test', report())).toBe(true);
    expect(await store.tlsRpt.unreportedDays('2025-01-06')).toEqual([{ day: '2025-01-05', policyDomain: 'one.test' }]);
  });

  it('creates a day’s report once, however many runs create it at once', async () => {
    const store = ctx.store;
    const made = await Promise.all(['a', 'b', 'c', 'd'].map((id) => store.tlsRpt.createReport('2025-01-05', 'one.test', report({ reportId: id }))));
    expect(made.filter(Boolean)).toHaveLength(1);
    const kept = await store.tlsRpt.report('2025-01-05', 'one.test');
    expect(kept?.reportId).toBe(['a', 'b', 'c', 'd'][made.indexOf(true)]);
    expect(await store.tlsRpt.report('2025-01-05', 'two.test')).toBeUndefined();
  });

  it('updates a report and lists those due with URIs pending', async () => {
    const store = ctx.store;
    await store.tlsRpt.createReport('2025-01-05', 'one.test', report());
    await store.tlsRpt.createReport('2025-01-05', 'two.test', report({ pending: [] }));
    expect((await store.tlsRpt.dueReports(T0)).map((r) => r.policyDomain)).toEqual(['one.test']);
    await store.tlsRpt.updateReport('2025-01-05', 'one.test', report({ attempts: 1, nextAtMs: T0 + 60_000 }));
    expect(await store.tlsRpt.dueReports(T0)).toEqual([]);
    const [due] = await store.tlsRpt.dueReports(T0 + 60_000);
    expect(due).toMatchObject({ day: '2025-01-05', policyDomain: 'one.test', report: { attempts: 1, pending: ['https://rua.test/'] } });
    expect(Array.from(due.report.gzip)).toEqual([31, 139, 8]);
  });

  it('removes counts and reports of days before a day', async () => {
    const store = ctx.store;
    await store.tlsRpt.addCounts([counts({ day: '2025-01-04', success: 1 }), counts({ day: '2025-01-05', success: 1 })]);
    await store.tlsRpt.createReport('2025-01-04', 'one.test', report());
    expect(await store.tlsRpt.removeBefore('2025-01-05')).toBe(2);
    expect(await store.tlsRpt.report('2025-01-04', 'one.test')).toBeUndefined();
    expect(await store.tlsRpt.counts('2025-01-05', 'one.test')).toHaveLength(1);
    expect(await store.tlsRpt.removeBefore('2025-01-05')).toBe(0);
  });
});

eachEngine('MtaStsPort', (ctx) => {
  const policy: StsPolicy = { mode: 'enforce', mx: ['mx.one.test', '*.one.test'], maxAge: 86_400 };

  it('keeps the last policy saved for a domain, across a restart', async () => {
    expect(await ctx.store.mtaSts.get('one.test')).toBeUndefined();
    await ctx.store.mtaSts.save('one.test', { id: 'v1', policy, fetchedAtMs: T0, expiresAtMs: T0 + DAY_MS });
    await ctx.store.mtaSts.save('one.test', { id: 'v2', policy, fetchedAtMs: T0 + 1, expiresAtMs: T0 + 1 + DAY_MS });
    const store = await ctx.reopen();
    expect(await store.mtaSts.get('one.test')).toEqual({ id: 'v2', policy, fetchedAtMs: T0 + 1, expiresAtMs: T0 + 1 + DAY_MS });
    expect(await store.mtaSts.get('two.test')).toBeUndefined();
  });
});

eachEngine('DnsFailuresPort', (ctx) => {
  it('says a domain has failed often enough at the third failure within the window, per account', async () => {
    const store = ctx.store;
    const fail = (atMs: number, accountId = ACCOUNT) => store.dnsFailures.countFailure({ accountId, domain: 'Gone.test', atMs });
    expect(await fail(T0)).toBe(false);
    expect(await fail(T0 + 1)).toBe(false);
    expect(await fail(T0 + 2, 'other-account')).toBe(false);
    expect(await fail(T0 + 3)).toBe(true);
    expect(await store.dnsFailures.recent(ACCOUNT, 'gone.test')).toEqual([T0, T0 + 1, T0 + 3]);
    expect(await store.dnsFailures.recent('other-account', 'GONE.test')).toEqual([T0 + 2]);
    expect(await store.dnsFailures.recent(ACCOUNT, 'never.test')).toEqual([]);
  });

  it('forgets failures older than the window', async () => {
    const store = ctx.store;
    const fail = (atMs: number) => store.dnsFailures.countFailure({ accountId: ACCOUNT, domain: 'gone.test', atMs });
    await fail(T0);
    await fail(T0 + 1);
    expect(await fail(T0 + 8 * DAY_MS)).toBe(false);
    expect(await store.dnsFailures.recent(ACCOUNT, 'gone.test')).toEqual([T0 + 8 * DAY_MS]);
  });

  it('counts every one of concurrent failures, and crosses the threshold once', async () => {
    const store = ctx.store;
    const reached = await Promise.all([0, 1, 2].map((i) => store.dnsFailures.countFailure({ accountId: ACCOUNT, domain: 'gone.test', atMs: T0 + i })));
    expect(reached.filter(Boolean)).toHaveLength(1);
    expect(await store.dnsFailures.recent(ACCOUNT, 'gone.test')).toHaveLength(3);
  });
});

eachEngine('RetentionPort', (ctx) => {
  it('sweeps DNS failures out of their window in batches, removing entries left empty', async () => {
    const store = ctx.store;
    for (const domain of ['a.test', 'b.test', 'c.test']) await store.dnsFailures.countFailure({ accountId: ACCOUNT, domain, atMs: T0 });
    await store.dnsFailures.countFailure({ accountId: ACCOUNT, domain: 'b.test', atMs: T0 + 7 * DAY_MS });
    const first = await store.retention.sweepDnsFailures({ nowMs: T0 + 7 * DAY_MS + 1, batch: 2 });
    expect(first.next).toBeDefined();
    const second = await store.retention.sweepDnsFailures({ nowMs: T0 + 7 * DAY_MS + 1, batch: 2, after: first.next });
    expect(second.next).toBeUndefined();
    expect(first.removed + second.removed).toBe(2);
    expect(await store.dnsFailures.recent(ACCOUNT, 'b.test')).toEqual([T0 + 7 * DAY_MS]);
    expect(await store.dnsFailures.recent(ACCOUNT, 'a.test')).toEqual([]);
  });

  it('removes old events with their finished messages, and stops at a message still queued until it is done', async () => {
    const store = ctx.store;
    const done = await queueMessage(store, { to: ['a@one.test'], now: new Date(T0) });
    const queued = await queueMessage(store, { to: ['b@two.test'], now: new Date(T0 + 1) });
    const [job] = await store.queue.jobsOfMessage(done);
    await store.queue.drop(job.id, new Date(T0 + 2));
    const cutoffMs = T0 + DAY_MS;

    const swept = await store.retention.sweepBatch({ cutoffMs, batch: 100 });
    expect(swept).toEqual({ events: 2, messages: 1, inboundMessages: 0, more: false, heldBy: queued });
    expect(await store.messages.get(done)).toBeUndefined();
    expect(await store.queue.jobsOfMessage(done)).toEqual([]);
    expect(await store.messages.get(queued)).toBeDefined();
    expect((await store.events.ofMessage(queued)).map((e) => e.eventType)).toEqual(['accepted', 'processed']);
    expect(await store.retention.isPending(queued)).toBe(false);

    const [open] = await store.queue.jobsOfMessage(queued);
    await store.queue.drop(open.id, new Date(T0 + 3));
    const later = await store.retention.sweepBatch({ cutoffMs, batch: 100 });
    expect(later).toMatchObject({ messages: 1, more: false });
    expect(later.heldBy).toBeUndefined();
    expect(await store.messages.get(queued)).toBeUndefined();
    expect(await store.events.ofMessage(queued)).toEqual([]);
    expect(await store.events.ofMessage(done)).toEqual([]);
  });

  it('stops a batch at its size and says there is more', async () => {
    const store = ctx.store;
    for (let i = 0; i < 3; i++) {
      const id = await queueMessage(store, { to: [`r${i}@one.test`], now: new Date(T0 + i) });
      for (const job of await store.queue.jobsOfMessage(id)) await store.queue.drop(job.id, new Date(T0 + i));
    }
    const first = await store.retention.sweepBatch({ cutoffMs: T0 + DAY_MS, batch: 2 });
    expect(first).toMatchObject({ events: 2, more: true });
    expect(await store.retention.sweepBatch({ cutoffMs: T0 - 1, batch: 2 })).toMatchObject({ events: 0, messages: 0, more: false });
  });
});
