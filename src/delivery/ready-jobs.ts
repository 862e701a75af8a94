/**
 * The jobs leased ahead (dispatcher.ts): leased, not started, waiting for a slot of their site.
 * In lease order (due order), as a Map keeps insertion order, with the number of jobs per
 * recipient domain kept alongside, so the dispatcher's passes cost the domains that have jobs
 * waiting rather than the jobs: a pass can stop once every such domain was found full, and the
 * lease planner counts a site's jobs ahead per domain (bench delivery, issue 36).
 *
 * Counted per domain, not per site: a domain's site key changes when an MX lookup first tells
 * it (sites.ts), and a count kept under the old key would then be wrong.
 */
import type { LeasedJob } from '../store/port/queue.js';

export class ReadyJobs {
  private readonly jobs = new Map<string, LeasedJob>();
  private readonly perDomain = new Map<string, number>();

  get size(): number {
    return this.jobs.size;
  }

  /** How many recipient domains have jobs waiting. */
  get domainCount(): number {
    return this.perDomain.size;
  }

  has(id: string): boolean {
    return this.jobs.has(id);
  }

  add(job: LeasedJob): void {
    if (this.jobs.has(job.id)) return;
    this.jobs.set(job.id, job);
    this.perDomain.set(job.domain, (this.perDomain.get(job.domain) ?? 0) + 1);
  }

  delete(job: LeasedJob): void {
    if (!this.jobs.delete(job.id)) return;
    const n = (this.perDomain.get(job.domain) ?? 1) - 1;
    if (n > 0) this.perDomain.set(job.domain, n);
    else this.perDomain.delete(job.domain);
  }

  /** In lease order. A job deleted during the iteration is not visited (Map iteration). */
  values(): IterableIterator<LeasedJob> {
    return this.jobs.values();
  }

  /** [domain, jobs waiting] for every domain with at least one. */
  domains(): IterableIterator<[string, number]> {
    return this.perDomain.entries();
  }

  /** Empties it; returns what it held, in lease order. */
  takeAll(): LeasedJob[] {
    const all = [...this.jobs.values()];
    this.jobs.clear();
    this.perDomain.clear();
    return all;
  }
}
