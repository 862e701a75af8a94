/**
 * The retention sweeper: a component that removes events and messages older than
 * `retention.days` in the background. Each batch is one short transaction (BATCH events);
 * between batches it yields to the event loop, so API requests and deliveries keep flowing.
 * The timer is unref()'d: the sweeper never keeps the process alive.
 */
import type { Logger } from 'pino';
import type { Store } from '../store/env.js';
import { sweepRetentionBatch } from '../store/retention.js';

const DAY_MS = 86_400_000;

export interface RetentionSweeperOptions {
  store: Store;
  retentionDays: number;
  logger: Logger;
  /** Clock, injectable for tests. */
  now?: () => number;
  /** Pause between sweeps. */
  intervalMs?: number;
  /** Events per transaction. */
  batch?: number;
}

export class RetentionSweeper {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<unknown> | null = null;
  private stopped = false;
  private readonly now: () => number;
  private readonly intervalMs: number;
  private readonly batch: number;

  constructor(private readonly opts: RetentionSweeperOptions) {
    this.now = opts.now ?? Date.now;
    this.intervalMs = opts.intervalMs ?? 10 * 60_000;
    this.batch = opts.batch ?? 500;
  }

  async start(): Promise<void> {
    this.stopped = false;
    this.schedule(5_000);
  }

  /** Waits for the batch in flight; no new batch starts. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.running?.catch(() => undefined);
  }

  /** Sweeps until nothing old is left (or the sweeper is stopped); returns what went. */
  async sweepNow(): Promise<{ events: number; messages: number }> {
    if (this.running) await this.running.catch(() => undefined);
    const run = this.sweepAll();
    this.running = run;
    try {
      return await run;
    } finally {
      if (this.running === run) this.running = null;
    }
  }

  private async sweepAll(): Promise<{ events: number; messages: number }> {
    const cutoffMs = this.now() - this.opts.retentionDays * DAY_MS;
    const total = { events: 0, messages: 0 };
    for (;;) {
      const r = await sweepRetentionBatch(this.opts.store, { cutoffMs, batch: this.batch });
      total.events += r.events;
      total.messages += r.messages;
      if (!r.more || this.stopped) break;
      await new Promise((resolve) => setImmediate(resolve));
    }
    if (total.events > 0 || total.messages > 0) this.opts.logger.info({ ...total, cutoff: new Date(cutoffMs).toISOString() }, 'retention sweep');
    return total;
  }

  private schedule(delayMs: number): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      this.sweepNow()
        .catch((err) => this.opts.logger.warn({ err }, 'retention sweep failed'))
        .finally(() => this.schedule(this.intervalMs));
    }, delayMs);
    this.timer.unref();
  }
}
