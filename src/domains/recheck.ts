/**
 * Re-checks verified domains in DNS every `intervalMs`, so a record that disappears moves to
 * `failing` (and the domain to unverified) without anyone calling verify. Domains that were
 * verified once and are failing now are watched too, so they recover on their own.
 *
 * Runs never overlap: the next one is scheduled when the previous one ends, and runOnce() called
 * during a run joins it. stop() cancels the timer and waits for a run in progress, which checks
 * for stop between domains.
 */
import type { Logger } from '../log/logger.js';
import type { StorePort } from '../store/port/index.js';
import type { DomainService } from './service.js';

export interface DomainRecheckOptions {
  store: Pick<StorePort, 'domains'>;
  domains: Pick<DomainService, 'verify'>;
  intervalMs: number;
  logger: Logger;
  /** Delay of the first run after start: a daemon restarted more often than intervalMs still
   *  re-checks. Default: one minute (or intervalMs if shorter). */
  firstRunDelayMs?: number;
}

export interface RecheckSummary {
  checked: number;
  /** Domains that went from verified to unverified in this run. */
  lost: number;
}

export class DomainRecheck {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<RecheckSummary> | null = null;
  private stopping = false;

  constructor(private readonly opts: DomainRecheckOptions) {}

  async start(): Promise<void> {
    this.stopping = false;
    this.schedule(this.opts.firstRunDelayMs ?? Math.min(60_000, this.opts.intervalMs));
  }

  async stop(): Promise<void> {
    this.stopping = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.running?.catch(() => undefined);
  }

  /** One pass over the watched domains (tests call it directly). */
  runOnce(): Promise<RecheckSummary> {
    this.running ??= this.run().finally(() => {
      this.running = null;
    });
    return this.running;
  }

  private schedule(delayMs: number): void {
    if (this.stopping) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      this.runOnce()
        .catch((err: unknown) => this.opts.logger.error({ err }, 'domain re-check failed'))
        .finally(() => this.schedule(this.opts.intervalMs));
    }, delayMs);
    this.timer.unref();
  }

  private async run(): Promise<RecheckSummary> {
    const summary: RecheckSummary = { checked: 0, lost: 0 };
    for (const id of await this.opts.store.domains.toRecheck()) {
      if (this.stopping) break;
      try {
        const wasVerified = (await this.opts.store.domains.get(id))?.verified ?? false;
        const after = await this.opts.domains.verify(id);
        if (!after) continue; // deleted meanwhile
        summary.checked++;
        if (wasVerified && !after.verified) summary.lost++;
      } catch (err) {
        this.opts.logger.error({ err, domainId: id }, 'domain re-check of one domain failed');
      }
    }
    this.opts.logger.debug(summary, 'domain re-check done');
    return summary;
  }
}
