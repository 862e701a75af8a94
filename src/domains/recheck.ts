/**
 * Re-checks verified domains in DNS every `intervalMs`, so a record that disappears moves to
 * `failing` (and the domain to unverified) without anyone calling verify. Domains that were
 * verified once and are failing now are watched too, so they recover on their own.
 *
 * Runs never overlap: the next one is scheduled when the previous one ends, and runOnce() called
 * during a run joins it. stop() cancels the timer and waits for a run in progress, which checks
 * for stop between domains.
 *
 * One node at a time re-checks (the coordination's 'domain-recheck' leadership): a scheduled run
 * goes only while this node leads, renews the lease after each domain and stops when a renewal
 * fails; a node that does not lead skips the run and tries at its next one. On one node the
 * lease is always this re-check's.
 */
import { runAsLeader } from '../coordination/leader.js';
import type { Coordination, Lease } from '../coordination/port.js';
import type { Logger } from '../log/logger.js';
import type { StorePort } from '../store/port/index.js';
import type { DomainService } from './service.js';

export interface DomainRecheckOptions {
  store: Pick<StorePort, 'domains'>;
  domains: Pick<DomainService, 'verify'>;
  /** The node's coordination: scheduled runs take the 'domain-recheck' leadership. */
  coordination: Pick<Coordination, 'lead'>;
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

/** The leadership's ttl: above one domain's checks (a few DNS queries, each under dns.timeoutMs), renewed after each. */
const LEAD_TTL_MS = 5 * 60_000;

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

  /**
   * One pass over the watched domains, whoever leads (tests call it directly); with `lease`, it
   * stops at the first renewal that fails. A call during a run joins that run.
   */
  runOnce(lease?: Lease): Promise<RecheckSummary> {
    this.running ??= this.run(lease).finally(() => {
      this.running = null;
    });
    return this.running;
  }

  /** The scheduled run: as the leader of 'domain-recheck'; null while another holder leads. */
  async runAsLeader(): Promise<RecheckSummary | null> {
    const r = await runAsLeader(this.opts.coordination, 'domain-recheck', LEAD_TTL_MS, (lease) => this.runOnce(lease));
    return r.ran ? r.value : null;
  }

  private schedule(delayMs: number): void {
    if (this.stopping) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      this.runAsLeader()
        .catch((err: unknown) => this.opts.logger.error({ err }, 'domain re-check failed'))
        .finally(() => this.schedule(this.opts.intervalMs));
    }, delayMs);
    this.timer.unref();
  }

  private async run(lease: Lease | undefined): Promise<RecheckSummary> {
    const summary: RecheckSummary = { checked: 0, lost: 0 };
    for (const id of await this.opts.store.domains.toRecheck()) {
      if (this.stopping) break;
      // Another node leads now (this run outlived the ttl): the rest is its work.
      if (lease && !(await lease.renew())) break;
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
