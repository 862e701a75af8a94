/**
 * The channel purger: removes the data of deleted channels in the background (the store's
 * channels.purgeBatch; LMDB: store/lmdb/channel-purge.ts), one bounded commit per batch,
 * yielding to the event loop between batches so requests and deliveries keep flowing. Work is
 * found in the store (channels.pendingPurges), so a purge interrupted by a stop or a crash
 * resumes at the next start. The timer is unref()'d.
 *
 * One node at a time purges (the coordination's 'channel-purge' leadership), renewing the lease
 * after each batch and stopping when a renewal fails; a node that does not lead leaves the work
 * to the leader and looks again at its idle check. A deletion wakes the purgers through the
 * coordination's 'purges' topic (ChannelService), so the leader starts at once whichever node
 * answered the DELETE. On one node the lease is always this purger's.
 */
import type { Logger } from 'pino';
import { runAsLeader } from '../coordination/leader.js';
import type { Coordination, Lease } from '../coordination/port.js';
import type { StorePort } from '../store/port/index.js';

export interface ChannelPurgerOptions {
  store: Pick<StorePort, 'channels'>;
  /** The node's coordination: 'purges' wake-ups, and the 'channel-purge' leadership each run takes. */
  coordination: Pick<Coordination, 'lead' | 'onWake'>;
  logger: Logger;
  /** Removals per transaction. */
  batch?: number;
  /** Look for work this often even without a kick (a purge left by an earlier run). */
  idleMs?: number;
}

/** The leadership's ttl: well above one batch (one bounded commit), renewed after each. */
const LEAD_TTL_MS = 60_000;

export class ChannelPurger {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;
  private stopped = true;
  /** A kick came during a run: its channel may not be in that run's list. */
  private again = false;
  private readonly batch: number;
  private readonly idleMs: number;
  private offWake: (() => void) | undefined;

  constructor(private readonly o: ChannelPurgerOptions) {
    this.batch = o.batch ?? 500;
    this.idleMs = o.idleMs ?? 60_000;
  }

  async start(): Promise<void> {
    this.stopped = false;
    this.offWake ??= this.o.coordination.onWake('purges', () => this.kick());
    this.kick();
  }

  /** Waits for the batch in flight; what is left resumes at the next start. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.offWake?.();
    this.offWake = undefined;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.running?.catch(() => undefined);
  }

  /** Start now (a channel was just deleted); during a run, one more run follows it. */
  kick(): void {
    if (this.stopped) return;
    if (this.running) {
      this.again = true;
      return;
    }
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.again = false;
    const run = this.runIfLeader().finally(() => {
      if (this.running === run) this.running = null;
      if (this.again) this.kick();
      else this.schedule();
    });
    this.running = run;
  }

  /** Waits until nothing is left to purge, or a batch failed (tests). */
  async drain(): Promise<void> {
    for (let round = 0; round < 100; round++) {
      while (this.running) await this.running.catch(() => undefined);
      if (this.stopped || (await this.o.store.channels.pendingPurges()).length === 0) return;
      this.kick();
    }
  }

  private schedule(): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => this.kick(), this.idleMs);
    this.timer.unref();
  }

  /**
   * One run, as the leader of 'channel-purge'; skipped while another holder leads. A failure to
   * take the lease is logged as a failed batch is: the idle check tries again.
   */
  private async runIfLeader(): Promise<void> {
    try {
      await runAsLeader(this.o.coordination, 'channel-purge', LEAD_TTL_MS, (lease) => this.runAll(lease));
    } catch (err) {
      this.o.logger.error({ err }, 'channel purge could not run');
    }
  }

  private async runAll(lease: Lease): Promise<void> {
    for (const channelId of await this.o.store.channels.pendingPurges()) {
      let removed = 0;
      for (;;) {
        if (this.stopped) return;
        try {
          const r = await this.o.store.channels.purgeBatch(channelId, this.batch);
          removed += r.removed;
          if (r.done) break;
          // Another node leads now (this one hung past the ttl): the rest is its work.
          if (!(await lease.renew())) return;
        } catch (err) {
          // Left in channelPurges: the next run (idle timer or restart) tries again.
          this.o.logger.error({ err, channelId }, 'channel purge batch failed');
          return;
        }
        await new Promise((r) => setImmediate(r));
      }
      this.o.logger.info({ channelId, removed }, 'deleted channel purged');
    }
  }
}
