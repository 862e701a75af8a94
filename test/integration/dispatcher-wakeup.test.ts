/**
 * The dispatcher's wake-up when a job falls due while a round is looking at the queue. A round
 * leases what is due at the time of its scan, then plans its next wake-up; a job that became due
 * between the two (the lease write took a millisecond, or the timer fired a millisecond early on
 * the wall clock) was neither leased nor in the future any more, and the dispatcher slept until
 * the idle check, 60 s later (seen in test/e2e/peer-resets.test.ts as a retry that never came).
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { AttemptFn } from '../../src/delivery/attempt.js';
import { DeliveryService } from '../../src/delivery/dispatcher.js';
import type { AttemptResult } from '../../src/domain/delivery-result.js';
import { deliveryConfig, openTestStore, queueMessage, silentLogger, type TestStore } from '../support/delivery.js';
import { FakeClock } from '../support/fake-clock.js';
import { waitFor } from '../support/wait.js';

/** A fake clock that can be made to move on by `step` ms at every reading, as real time does while work runs. */
class MovingClock extends FakeClock {
  step = 0;

  override now(): number {
    const t = this.ms;
    this.ms += this.step;
    return t;
  }
}

let t: TestStore | undefined;
let service: DeliveryService | undefined;

afterEach(async () => {
  await service?.stop();
  await t?.close();
  service = t = undefined;
});

const deferred = (recipients: readonly string[]): AttemptResult => ({
  recipients: recipients.map((recipient) => ({ recipient, outcome: 'deferred', category: 'other', phase: 'connect', response: 'ECONNRESET: read ECONNRESET' })),
  tls: false,
  response: 'ECONNRESET: read ECONNRESET',
});

describe('dispatcher wake-up', () => {
  it('retries a job that fell due during a round at once, not at the idle check', async () => {
    t = await openTestStore();
    const clock = new MovingClock();
    let attempts = 0;
    const attempt: AttemptFn = async ({ job }) => {
      attempts++;
      return deferred(job.recipients);
    };
    service = new DeliveryService({
      store: t.store,
      config: deliveryConfig({ 'delivery.retrySchedule': '1s*' }),
      resolver: { mx: async () => ({ status: 'nxdomain' }), a: async () => ({ status: 'nxdomain' }), aaaa: async () => ({ status: 'nxdomain' }) },
      logger: silentLogger(),
      clock,
      attempt,
    });
    await service.start();
    const id = await queueMessage(t.store, { to: ['ann@wakeup-mail.net'], now: new Date(clock.now()) });
    service.notify();
    const first = await waitFor(async () => (await t!.store.queue.jobsOfMessage(id)).find((j) => j.attempts === 1), { what: 'the first attempt' });
    const dueMs = Date.parse(first.dueAt);
    await waitFor(() => clock.nextTimerAt() === dueMs, { what: 'the retry timer' });

    // A round one millisecond before the retry is due, during which time moves on past it.
    clock.ms = dueMs - 1;
    clock.step = 1;
    service.notify();
    await waitFor(() => clock.nextTimerAt() !== dueMs || attempts === 2, { what: 'the round to plan its next wake-up' });
    clock.step = 0;

    // Within the retry's own second, not the 60 s idle check. When the retry already started
    // while time was moving, the clock stays: a second more would make the third attempt due.
    if (attempts < 2) clock.advance(1000);
    // The attempt counter moves when the attempt starts; the job's when its outcome is recorded.
    await waitFor(async () => ((await t!.store.queue.jobsOfMessage(id))[0]?.attempts ?? 0) >= 2, { what: 'the retry to be recorded', timeout: 5_000 });
    expect(attempts).toBe(2);
  });

  it('starts the next job when an outcome commit frees a place among the attempts in flight (maxInFlight)', async () => {
    t = await openTestStore();
    const clock = new FakeClock();
    const delivered = (recipients: readonly string[]): AttemptResult => ({
      recipients: recipients.map((recipient) => ({ recipient, outcome: 'delivered', category: 'other', phase: 'message', smtpCode: 250, response: '250 2.0.0 OK' })),
      tls: false,
      smtpCode: 250,
      response: '250 2.0.0 OK',
    });
    service = new DeliveryService({
      store: t.store,
      config: deliveryConfig({ 'delivery.rate': 1000 }),
      resolver: { mx: async () => ({ status: 'nxdomain' }), a: async () => ({ status: 'nxdomain' }), aaaa: async () => ({ status: 'nxdomain' }) },
      logger: silentLogger(),
      clock,
      attempt: async ({ job }) => delivered(job.recipients),
      // One attempt at a time, counted until its outcome is committed; the fake clock never
      // reaches the idle check, so only the end of each commit can start the next job.
      maxInFlight: 1,
    });
    await service.start();
    const ids: string[] = [];
    for (const to of ['a@one-mail.net', 'b@two-mail.net', 'c@three-mail.net']) ids.push(await queueMessage(t.store, { to: [to], now: new Date(clock.now()) }));
    service.notify();
    await waitFor(async () => (await Promise.all(ids.map((id) => t!.store.queue.jobsOfMessage(id)))).every((jobs) => jobs[0]?.state === 'done'), { what: 'all three jobs done', timeout: 5_000 });
  });
});
