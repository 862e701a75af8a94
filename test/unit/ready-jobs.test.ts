import { describe, expect, it } from 'vitest';
import { ReadyJobs } from '../../src/delivery/ready-jobs.js';
import type { LeasedJob } from '../../src/store/port/queue.js';

function job(id: string, domain: string): LeasedJob {
  const leased: LeasedJob = {
    id,
    messageId: `m-${id}`,
    accountId: 'a',
    channelId: 'c',
    domain,
    recipients: [`r@${domain}`],
    state: 'leased',
    attempts: 0,
    createdAt: '2026-12-07T00:00:00.000Z',
    dueAt: '2026-12-07T00:00:00.000Z',
    history: [],
    leaseUntil: '2026-12-07T00:30:00.000Z',
    leaseOwner: 'local',
    leaseGeneration: 1,
  };
  return leased;
}

describe('ReadyJobs (the jobs leased ahead)', () => {
  it('keeps lease order and counts the jobs waiting per domain', () => {
    const ready = new ReadyJobs();
    const [a1, b1, a2] = [job('1', 'a.net'), job('2', 'b.net'), job('3', 'a.net')];
    for (const j of [a1, b1, a2]) ready.add(j);
    expect([...ready.values()].map((j) => j.id)).toEqual(['1', '2', '3']);
    expect(ready.size).toBe(3);
    expect(ready.domainCount).toBe(2);
    expect(new Map(ready.domains())).toEqual(new Map([['a.net', 2], ['b.net', 1]]));

    ready.delete(a1);
    expect(new Map(ready.domains())).toEqual(new Map([['a.net', 1], ['b.net', 1]]));
    ready.delete(b1);
    // A domain without jobs waiting is no longer counted.
    expect(ready.domainCount).toBe(1);
    expect(ready.has('2')).toBe(false);
    expect(ready.has('3')).toBe(true);
  });

  it('counts a job once, however often it is added or deleted', () => {
    const ready = new ReadyJobs();
    const a = job('1', 'a.net');
    ready.add(a);
    ready.add(a);
    expect(new Map(ready.domains())).toEqual(new Map([['a.net', 1]]));
    ready.delete(a);
    ready.delete(a);
    ready.delete(job('9', 'a.net'));
    expect(ready.size).toBe(0);
    expect(ready.domainCount).toBe(0);
  });

  it('gives everything back in lease order and is empty after', () => {
    const ready = new ReadyJobs();
    for (const [id, d] of [['1', 'a.net'], ['2', 'b.net'], ['3', 'c.net']] as const) ready.add(job(id, d));
    expect(ready.takeAll().map((j) => j.id)).toEqual(['1', '2', '3']);
    expect(ready.size).toBe(0);
    expect(ready.domainCount).toBe(0);
    expect([...ready.values()]).toEqual([]);
  });
});
