/**
 * The background jobs that one node at a time does for the service run as the leader of their
 * task (coordination/leader.ts): the retention sweep, the channel purge and the domain re-check.
 * Two instances of a job share one LocalCoordination here, as two nodes share a cluster's: only
 * the holder of the task's lease works, and a holder whose lease went to another stops at its
 * next renewal. Stores are fakes (no files); time is a FakeClock.
 */
import { describe, expect, it } from 'vitest';
import { ChannelPurger } from '../../src/channels/purger.js';
import { LocalCoordination } from '../../src/coordination/local.js';
import type { SendingDomain } from '../../src/domain/sending-domain.js';
import { DomainRecheck } from '../../src/domains/recheck.js';
import { createLogger } from '../../src/log/logger.js';
import { RetentionSweeper } from '../../src/retention/sweeper.js';
import type { StorePort } from '../../src/store/port/index.js';
import type { SweepResult } from '../../src/store/port/retention.js';
import { FakeClock } from '../support/fake-clock.js';
import { waitFor } from '../support/wait.js';

const logger = createLogger({ level: 'silent' });

function gate<T>(): { promise: Promise<T>; open(value: T): void } {
  let open!: (value: T) => void;
  const promise = new Promise<T>((resolve) => (open = resolve));
  return { promise, open };
}

/** A retention store whose sweep batches answer `batch()`; counts the calls. */
function retentionStore(batch: () => Promise<SweepResult>) {
  const calls = { batches: 0, dnsSweeps: 0 };
  const store = {
    retention: {
      sweepBatch: async () => {
        calls.batches++;
        return batch();
      },
      sweepDnsFailures: async () => {
        calls.dnsSweeps++;
        return { removed: 0 };
      },
    },
  } as unknown as Pick<StorePort, 'retention'>;
  return { store, calls };
}

function sweeper(store: Pick<StorePort, 'retention'>, coordination: LocalCoordination, clock: FakeClock): RetentionSweeper {
  return new RetentionSweeper({ store, coordination, retentionDays: 1, logger, now: () => clock.now() });
}

describe('retention sweep as leader', () => {
  it('runs on one of two sweepers sharing the coordination at a time; the other skips, then sweeps once the first is done', async () => {
    const clock = new FakeClock();
    const c = new LocalCoordination({ nodeId: 'n1', clock });
    const first = gate<SweepResult>();
    const a = retentionStore(() => first.promise);
    const b = retentionStore(async () => ({ events: 1, messages: 0, inboundMessages: 0, more: false }));
    const running = sweeper(a.store, c, clock).sweepAsLeader();
    await waitFor(() => a.calls.batches === 1, { what: 'the first sweeper’s first batch' });

    const other = sweeper(b.store, c, clock);
    expect(await other.sweepAsLeader()).toBeNull();
    expect(b.calls).toEqual({ batches: 0, dnsSweeps: 0 });

    first.open({ events: 2, messages: 1, inboundMessages: 0, more: false });
    expect(await running).toEqual({ events: 2, messages: 1, inboundMessages: 0, dnsFailures: 0 });
    // The lease was given back at the end of the run: the next period's sweep may be anyone's.
    expect(await other.sweepAsLeader()).toEqual({ events: 1, messages: 0, inboundMessages: 0, dnsFailures: 0 });
  });

  it('stops between batches once its leadership lapsed and another sweeper took it', async () => {
    const clock = new FakeClock();
    const c = new LocalCoordination({ nodeId: 'n1', clock });
    const first = gate<SweepResult>();
    const a = retentionStore(() => first.promise);
    const b = retentionStore(async () => ({ events: 5, messages: 0, inboundMessages: 0, more: false }));
    const hung = sweeper(a.store, c, clock).sweepAsLeader();
    await waitFor(() => a.calls.batches === 1, { what: 'the first sweeper’s first batch' });

    // Its batch hangs past the lease's ttl: the other sweeper's next period takes over.
    clock.advance(5 * 60_000 + 1);
    expect(await sweeper(b.store, c, clock).sweepAsLeader()).toEqual({ events: 5, messages: 0, inboundMessages: 0, dnsFailures: 0 });

    // The hung batch returns with more to do: the renewal fails and it sweeps no further.
    first.open({ events: 7, messages: 0, inboundMessages: 0, more: true });
    expect(await hung).toEqual({ events: 7, messages: 0, inboundMessages: 0, dnsFailures: 0 });
    expect(a.calls).toEqual({ batches: 1, dnsSweeps: 0 });
  });
});

describe('channel purge as leader', () => {
  it('leaves the purge to the holder of its leadership, and purges on a "purges" wake-up once it is free', async () => {
    const clock = new FakeClock();
    const c = new LocalCoordination({ nodeId: 'n1', clock });
    const held = await c.lead('channel-purge', 60_000);
    let pending = ['ch-gone'];
    const purged: string[] = [];
    const store = {
      channels: {
        pendingPurges: async () => pending,
        purgeBatch: async (channelId: string) => {
          purged.push(channelId);
          pending = [];
          return { removed: 3, done: true };
        },
      },
    } as unknown as Pick<StorePort, 'channels'>;
    // No idle check within the test: only a wake-up can start it.
    const purger = new ChannelPurger({ store, coordination: c, logger, idleMs: 3_600_000 });
    await purger.start();
    try {
      // Runs while another holds the lead: every one of them skips.
      await purger.drain();
      expect(purged).toEqual([]);

      await held!.release();
      c.wake('purges'); // what ChannelService.delete does after the deletion's commit
      await waitFor(() => purged.length === 1, { what: 'the purge after the wake-up' });
      expect(purged).toEqual(['ch-gone']);
    } finally {
      await purger.stop();
    }
  });
});

describe('domain re-check as leader', () => {
  it('skips a scheduled run while another holds its leadership, and runs once it is free', async () => {
    const clock = new FakeClock();
    const c = new LocalCoordination({ nodeId: 'n1', clock });
    const held = await c.lead('domain-recheck', 60_000);
    const verified: string[] = [];
    const recheck = new DomainRecheck({
      store: { domains: { toRecheck: async () => ['d1', 'd2'], get: async () => ({ verified: true }) as SendingDomain } } as unknown as Pick<StorePort, 'domains'>,
      coordination: c,
      domains: {
        verify: async (id) => {
          verified.push(id);
          return { verified: id === 'd1' } as SendingDomain;
        },
      },
      intervalMs: 60_000,
      logger,
    });
    expect(await recheck.runAsLeader()).toBeNull();
    expect(verified).toEqual([]);

    await held!.release();
    expect(await recheck.runAsLeader()).toEqual({ checked: 2, lost: 1 });
    expect(verified).toEqual(['d1', 'd2']);
  });
});
