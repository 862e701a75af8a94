/**
 * The retention sweeper: a component that removes events and messages older than
 * `retention.days` in the background (received messages too, once posted or failed), and the recipient domains' hard DNS failures older than
 * their 7-day window (store/dns-failures.ts; that window, not retention.days, says when they
 * stop counting). Each batch is one short transaction (`batch` events or entries); between
 * batches it yields to the event loop, so API requests and deliveries keep flowing.
 * The timer is unref()'d: the sweeper never keeps the process alive.
 *
 * One node at a time sweeps (the coordination's 'retention-sweep' leadership): the timer's sweep
 * runs only while this node leads, renews the lease between batches and stops when a renewal
 * fails. On one node the lease is always this sweeper's.
 */
import type { Logger } from 'pino';
import { runAsLeader } from '../coordination/leader.js';
import type { Coordination, Lease } from '../coordination/port.js';
import type { StorePort } from '../store/port/index.js';
import type { DnsFailureKey } from '../store/port/retention.js';

const DAY_MS = 86_400_000;

export interface RetentionSweeperOptions {
  store: Pick<StorePort, 'retention'>;
  /** The node's coordination: the timer's sweeps run as the leader of 'retention-sweep'. */
  coordination: Pick<Coordination, 'lead'>;
  retentionDays: number;
  /**
   * The longest a message stays unfinished on schedule and retries (retentionWindow): one accepted
   * longer than that before the cutoff holds the sweep no more (domain/retention-hold.ts).
   * Absent: every unfinished message holds it.
   */
  longestUnfinishedMs?: number;
  logger: Logger;
  /** Clock, injectable for tests. */
  now?: () => number;
  /** Pause between sweeps. */
  intervalMs?: number;
  /** Events (or DNS failure entries) per transaction. */
  batch?: number;
}

/** The sweeper's window from the config: retention.days, and limits.maxScheduleDays plus delivery.maxAgeMs as the longest a message stays unfinished. */
export function retentionWindow(c: { retention: { days: number }; limits: { maxScheduleDays: number }; delivery: { maxAgeMs: number } }): Pick<RetentionSweeperOptions, 'retentionDays' | 'longestUnfinishedMs'> {
  return { retentionDays: c.retention.days, longestUnfinishedMs: c.limits.maxScheduleDays * DAY_MS + c.delivery.maxAgeMs };
}

/** What one sweep removed. */
export interface SweepTotals {
  events: number;
  messages: number;
  /** Received messages (issue 33), posted or failed, received before the cutoff. */
  inboundMessages: number;
  /** Recipient domains' DNS failure entries with no failure left in their window. */
  dnsFailures: number;
  /**
   * The sweep stopped at this message's accepted event, older than retention.days: the message is
   * not finished (or finished since less than retention.days), and the events after it wait too.
   */
  heldBy?: string;
}

/**
 * The leadership's ttl: far above one batch (a short transaction), renewed after each, so it
 * lapses only when the leader stopped or hangs; another node then sweeps at its next period.
 */
const LEAD_TTL_MS = 5 * 60_000;

const nextTick = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

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

  /** The timer's sweep: as the leader of 'retention-sweep'; null while another holder leads. */
  async sweepAsLeader(): Promise<SweepTotals | null> {
    const r = await runAsLeader(this.opts.coordination, 'retention-sweep', LEAD_TTL_MS, (lease) => this.sweepNow(lease));
    return r.ran ? r.value : null;
  }

  /**
   * Sweeps until nothing old is left (or the sweeper is stopped, or `lease` was lost); returns
   * what went. Without a lease it sweeps whoever leads (tests, an operator's explicit sweep).
   */
  async sweepNow(lease?: Lease): Promise<SweepTotals> {
    if (this.running) await this.running.catch(() => undefined);
    const run = this.sweepAll(lease);
    this.running = run;
    try {
      return await run;
    } finally {
      if (this.running === run) this.running = null;
    }
  }

  private async sweepAll(lease: Lease | undefined): Promise<SweepTotals> {
    const cutoffMs = this.now() - this.opts.retentionDays * DAY_MS;
    const total: SweepTotals = { events: 0, messages: 0, inboundMessages: 0, dnsFailures: 0 };
    // Between batches: stopped, or the leadership went to another node meanwhile.
    const goOn = async () => !this.stopped && (lease === undefined || (await lease.renew()));
    for (;;) {
      const hold = this.opts.longestUnfinishedMs === undefined ? {} : { holdFromMs: cutoffMs - this.opts.longestUnfinishedMs };
      const r = await this.opts.store.retention.sweepBatch({ cutoffMs, batch: this.batch, ...hold });
      total.events += r.events;
      total.messages += r.messages;
      total.inboundMessages += r.inboundMessages;
      if (r.heldBy !== undefined) total.heldBy = r.heldBy;
      if (!r.more || !(await goOn())) break;
      await nextTick();
    }
    if (await goOn()) total.dnsFailures = await this.sweepDnsFailures(goOn);
    const removed = total.events + total.messages + total.inboundMessages + total.dnsFailures > 0;
    if (removed || total.heldBy !== undefined) this.opts.logger.info({ ...total, cutoff: new Date(cutoffMs).toISOString() }, 'retention sweep');
    return total;
  }

  /** Walks every DNS failure entry once, `batch` per transaction; answers how many went. */
  private async sweepDnsFailures(goOn: () => Promise<boolean>): Promise<number> {
    const nowMs = this.now();
    let removed = 0;
    let after: DnsFailureKey | undefined;
    for (;;) {
      const r = await this.opts.store.retention.sweepDnsFailures({ nowMs, batch: this.batch, after });
      removed += r.removed;
      if (!r.next || !(await goOn())) return removed;
      after = r.next;
      await nextTick();
    }
  }

  private schedule(delayMs: number): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      this.sweepAsLeader()
        .catch((err) => this.opts.logger.warn({ err }, 'retention sweep failed'))
        .finally(() => this.schedule(this.intervalMs));
    }, delayMs);
    this.timer.unref();
  }
}
