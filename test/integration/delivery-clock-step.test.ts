/**
 * Delivery when the wall clock is stepped (NTP, `date -s`, a VM resumed), on the dispatcher's
 * own clock (systemClock) over a Date.now that the test steps. Found by a probe under
 * libfaketime (issue 29): with the daemon's clock moved back an hour, 5 of 30 new sends went
 * out in a minute, as the attempt limiter stopped refilling and the jobs that were due were
 * not due any more on the earlier clock.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { AttemptFn } from '../../src/delivery/attempt.js';
import { DeliveryService } from '../../src/delivery/dispatcher.js';
import type { AttemptResult } from '../../src/domain/delivery-result.js';
import { allSent, deliveryConfig, openTestStore, queueMessage, silentLogger, type TestStore } from '../support/delivery.js';
import { waitFor } from '../support/wait.js';
import { maxInWindow } from '../support/windows.js';

const HOUR = 3_600_000;
const RATE = 10;

let t: TestStore | undefined;
let service: DeliveryService | undefined;

afterEach(async () => {
  await service?.stop();
  await t?.close();
  service = t = undefined;
  vi.restoreAllMocks();
});

/** Date.now, stepped by the test: everything in this process that reads the wall clock sees it. */
function steppedWallClock(): { step(ms: number): void } {
  const real = Date.now.bind(Date);
  let offset = 0;
  vi.spyOn(Date, 'now').mockImplementation(() => real() + offset);
  return { step: (ms) => (offset += ms) };
}

const noDns = { mx: async () => ({ status: 'nxdomain' as const }), a: async () => ({ status: 'nxdomain' as const }), aaaa: async () => ({ status: 'nxdomain' as const }) };

function outcome(recipients: readonly string[], delivered: boolean): AttemptResult {
  return delivered
    ? { recipients: recipients.map((recipient) => ({ recipient, outcome: 'delivered', category: 'delivered', phase: 'message', smtpCode: 250, response: '250 OK' })), tls: false, smtpCode: 250, response: '250 OK' }
    : { recipients: recipients.map((recipient) => ({ recipient, outcome: 'deferred', category: 'other', phase: 'message', smtpCode: 451, response: '451 4.3.0 try later' })), tls: false, smtpCode: 451, response: '451 4.3.0 try later' };
}

describe('delivery across a step of the wall clock', () => {
  it('delivers what was due, a retry and new sends at delivery.rate after the clock steps back an hour', async () => {
    const wall = steppedWallClock();
    t = await openTestStore();
    /** When each message went out (its pacer slot), on monotonic time. */
    const sent: number[] = [];
    const tries = new Map<string, number>();
    const attempt: AttemptFn = async ({ job, beforeBody }) => {
      const n = (tries.get(job.id) ?? 0) + 1;
      tries.set(job.id, n);
      // The retry-mail.net message is refused once: its retry is due 2 s later on the clock of the first try.
      if (job.domain === 'retry-mail.net' && n === 1) return outcome(job.recipients, false);
      await beforeBody?.();
      sent.push(performance.now());
      return outcome(job.recipients, true);
    };
    service = new DeliveryService({ store: t.store, config: deliveryConfig({ 'delivery.rate': RATE, 'delivery.retrySchedule': '2s*' }), resolver: noDns, logger: silentLogger(), attempt });
    await service.start();
    const store = t.store;
    const send = (to: string) => queueMessage(store, { to: [to], now: new Date(Date.now()) });
    const done = (ids: string[]) => allSent(store, ids);

    const retried = await send('ann@retry-mail.net');
    const early: string[] = [];
    for (let i = 0; i < 5; i++) early.push(await send(`early${i}@d${i}-mail.net`));
    service.notify();
    await waitFor(async () => (await done(early)) && (await store.queue.jobsOfMessage(retried))[0]?.attempts === 1, { what: 'the first sends and the first try of the retry' });

    // Due before the step, not yet leased (no notify) when the clock goes back an hour.
    const due: string[] = [];
    for (let i = 0; i < 10; i++) due.push(await send(`due${i}@d${i}-mail.net`));
    wall.step(-HOUR);
    service.notify();
    // New sends after the step: due at the (earlier) wall time, as the send path writes them.
    const after: string[] = [];
    for (let i = 0; i < 20; i++) after.push(await send(`after${i}@d${i}-mail.net`));
    service.notify();

    // Before, this waited an hour: the attempt limiter stopped refilling and nothing was due on the earlier clock.
    await waitFor(() => done([...due, ...after, retried]), { what: 'every message after the step', timeout: 20_000 });
    expect((await store.queue.jobsOfMessage(retried))[0]?.attempts).toBe(2);
    expect(sent.length).toBe(5 + 10 + 20 + 1);
    expect(maxInWindow(sent, 1000)).toBeLessThanOrEqual(RATE);
  });

  it('records every attempt in flight once when the clock steps forward two hours (no lease expires under it)', async () => {
    const wall = steppedWallClock();
    t = await openTestStore();
    const tries = new Map<string, number>();
    const held: Array<() => void> = [];
    const attempt: AttemptFn = async ({ job }) => {
      tries.set(job.id, (tries.get(job.id) ?? 0) + 1);
      await new Promise<void>((resolve) => held.push(resolve));
      return outcome(job.recipients, true);
    };
    service = new DeliveryService({ store: t.store, config: deliveryConfig({ 'delivery.rate': 100 }), resolver: noDns, logger: silentLogger(), attempt });
    await service.start();
    const store = t.store;
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push(await queueMessage(store, { to: [`r${i}@d${i}-mail.net`], now: new Date(Date.now()) }));
    service.notify();
    await waitFor(() => held.length === 5, { what: 'five attempts in flight' });

    // Past every lease (30 minutes): the next round's lease recovery runs, and must spare these.
    wall.step(2 * HOUR);
    const late = await queueMessage(store, { to: ['late@late-mail.net'], now: new Date(Date.now()) });
    service.notify();
    await waitFor(() => held.length === 6, { what: 'the attempt of a message sent after the step' });
    for (const release of held) release();

    await waitFor(() => allSent(store, [...ids, late]), { what: 'every outcome recorded' });
    expect([...tries.values()]).toEqual([1, 1, 1, 1, 1, 1]);
  });
});
