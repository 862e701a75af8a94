/**
 * The operator's running count of delivery attempts in the log: one info line per minute
 * (`event: "delivery_summary"`) with what the attempts of that minute did, instead of one info
 * line per delivered message (at the lifted rate the per-attempt line was ~3% of the main
 * thread, bench --profile). Attempts that did not deliver keep their own info line, and every
 * attempt stays in the job's history and the message's events (GET /activity/messages/{id}).
 */
import type { Logger } from '../log/logger.js';

export interface AttemptCounts {
  delivered: number;
  bounced: number;
  deferred: number;
  expired: number;
}

const SUMMARY_EVERY_MS = 60_000;

export class AttemptSummary {
  private attempts = 0;
  private readonly counts: AttemptCounts = { delivered: 0, bounced: 0, deferred: 0, expired: 0 };
  private reused = 0;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly logger: Logger,
    private readonly everyMs: number = SUMMARY_EVERY_MS,
  ) {}

  /** Counts one recorded attempt (recipients by outcome); the line follows within a minute. */
  add(c: AttemptCounts, reused: boolean | undefined): void {
    this.attempts++;
    this.counts.delivered += c.delivered;
    this.counts.bounced += c.bounced;
    this.counts.deferred += c.deferred;
    this.counts.expired += c.expired;
    if (reused) this.reused++;
    if (this.timer !== undefined) return;
    this.timer = setTimeout(() => this.flush(), this.everyMs);
    this.timer.unref();
  }

  /** Logs what was counted since the last line (nothing when nothing was); also at stop(). */
  flush(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    if (this.attempts === 0) return;
    this.logger.info({ event: 'delivery_summary', attempts: this.attempts, reusedConnections: this.reused, ...this.counts }, 'delivery attempts since the last summary');
    this.attempts = 0;
    this.reused = 0;
    this.counts.delivered = this.counts.bounced = this.counts.deferred = this.counts.expired = 0;
  }
}
