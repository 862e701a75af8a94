/**
 * The "health" SourceGate (issue 35, Failure): a sending source whose address is gone, or whose
 * connections all fail, is taken out of its pools for a while; the rest of each pool carries its
 * turns (SourceChooser), and when every source of a pool is out the picker defers, as for a full
 * site: nothing is bounced.
 *
 * Health is this node's own: a source is a local address, and an address belongs to a machine
 * (one node of a cluster may lose 192.0.2.55 while another still has it), so nothing here goes
 * through the coordination.
 *
 * A source goes out:
 *  - at once when an attempt could not bind its address (AttemptResult.localError
 *    'address_unavailable', EADDRNOTAVAIL): the kernel says the address is not on this machine;
 *  - after FAILURES_TO_TAKE_OUT attempts in a row from it opened no connection (connectFailed:
 *    refused, unreachable, no greeting), with no success from it in between, at no fewer than
 *    MIN_SITES different sites that other sources of this node reached meanwhile. A receiver
 *    that is down, or that refuses everyone, is never the source's fault: its failures count
 *    towards nothing unless another source gets through there.
 * The addresses are also tried at start (a bind), so a missing one costs no message at all.
 * It stays out for a backoff (1 min, doubling each time it goes out again up to 30 min, back to
 * 1 min after a success), then gets one probe attempt (reserve() lets one through at a time);
 * a success brings it back, a failure takes it out again. A missing address is probed without
 * a message: the gate tries to bind it (bindable), and only once that works does mail follow.
 *
 * "Success" is a server's reply over a new connection from the source (reused sessions prove
 * nothing about new ones); "reached" is any server reply to a source at a site.
 */
import net from 'node:net';
import type { AttemptResult } from '../domain/delivery-result.js';
import type { Logger } from '../log/logger.js';
import type { GateRefusal, SourceAttempt, SourceGate } from './source-gates.js';

export const FAILURES_TO_TAKE_OUT = 5;
export const MIN_SITES = 2;
export const FIRST_BACKOFF_MS = 60_000;
export const MAX_BACKOFF_MS = 30 * 60_000;
/** A probe attempt that never reported back (its attempt was not made after all) frees the probe after this. */
export const PROBE_LEASE_MS = 5 * 60_000;
/** Another source's reply at a site counts for a failure streak that began up to this much later. */
const REACH_WINDOW_MS = 5 * 60_000;
/** Sites remembered for "other sources reach it" (the least recently reached are forgotten first). */
const MAX_SITES = 10_000;
/** Sites of one failure streak remembered. */
const MAX_STREAK_SITES = 100;

export type HealthCause = 'address_unavailable' | 'connect_failures';

/** What GET /ops/sources shows under `health` for a source. */
export interface SourceHealthView {
  status: 'ok' | 'out';
  /** When it went out, or came back; null when it never changed. */
  since: string | null;
  /** While out: when it gets its probe attempt (in the past: the probe is due). */
  until: string | null;
  /** Why it is (or last was) out; null when it never was. */
  reason: string | null;
  cause: HealthCause | null;
  /** Attempts in a row from it that opened no connection. */
  consecutiveFailures: number;
}

interface Health {
  out: boolean;
  since?: number;
  until?: number;
  reason?: string;
  cause?: HealthCause;
  failures: number;
  streakStart?: number;
  streakSites: Set<string>;
  backoffMs: number;
  /** A probe attempt in flight since. */
  probeAt?: number;
  /** The bind check of a missing address: running, or done and passed (the probe attempt may go). */
  bind?: 'running' | 'passed';
}

export interface SourceHealthOptions {
  /** The configured sources (delivery.sources). */
  sources: readonly { name: string; address?: string }[];
  logger: Logger;
  /** Whether the address can be bound now (default: a TCP listen on it, port 0). */
  bindable?: (address: string) => Promise<boolean>;
  /** The clock of the check at start (default Date.now; the picker's clock where it is another). */
  now?: () => number;
}

export class SourceHealthGate implements SourceGate {
  readonly name = 'health';
  private readonly health = new Map<string, Health>();
  /** site → source → when a server last replied to it there. */
  private readonly reached = new Map<string, Map<string, number>>();
  private readonly addresses: Map<string, string | undefined>;
  private readonly bindable: (address: string) => Promise<boolean>;

  constructor(private readonly o: SourceHealthOptions) {
    this.addresses = new Map(o.sources.map((s) => [s.name, s.address]));
    this.bindable = o.bindable ?? canBind;
  }

  /**
   * Before delivery starts: a source whose address cannot be bound is out at once, before any
   * message is tried from it (a typo in delivery.sources, an address not yet on the interface).
   */
  async start(): Promise<void> {
    const missing = await Promise.all(this.o.sources.map(async (s) => (s.address !== undefined && !(await this.bindable(s.address)) ? s.name : undefined)));
    const now = (this.o.now ?? Date.now)();
    for (const name of missing) if (name !== undefined) this.goOut(name, this.stateOf(name), 'address_unavailable', now);
  }

  check(source: string, _site: string, now: number): GateRefusal | undefined {
    const h = this.health.get(source);
    if (!h?.out) return undefined;
    if (now < h.until!) return { gate: this.name, reason: `health: ${h.reason}`, until: h.until };
    if (h.cause === 'address_unavailable' && h.bind !== 'passed') {
      this.startBindCheck(source, h, now);
      return { gate: this.name, reason: `health: checking whether address ${this.addresses.get(source)} is back` };
    }
    if (h.probeAt !== undefined && now - h.probeAt < PROBE_LEASE_MS) return { gate: this.name, reason: 'health: a probe attempt is under way' };
    return undefined;
  }

  /** One probe attempt at a time for a source that is out: the first pick after its backoff takes it. */
  reserve(attempt: SourceAttempt, now: number): Promise<boolean> {
    const h = this.health.get(attempt.source);
    if (!h?.out) return Promise.resolve(true);
    if (this.check(attempt.source, attempt.site, now) !== undefined) return Promise.resolve(false);
    h.probeAt = now;
    return Promise.resolve(true);
  }

  observe(attempt: SourceAttempt, result: AttemptResult, _startedAt: number, now: number): void {
    if (result.simulated) return;
    const replied = result.recipients.some((r) => r.smtpCode !== undefined);
    if (replied) this.markReached(attempt.site, attempt.source, now);
    const h = this.stateOf(attempt.source);
    // While out, only its probe speaks for it: what attempts in flight when it went out report
    // later tells nothing new (nor would their start times tell them from the probe: an attempt
    // starts before it waits for a source).
    if (h.out && h.probeAt === undefined) return;
    if (result.localError === 'address_unavailable') {
      h.failures++;
      return this.goOut(attempt.source, h, 'address_unavailable', now);
    }
    if (result.connectFailed) return this.failed(attempt, h, now);
    if (replied && result.reused !== true) return this.succeeded(attempt.source, h, now);
    // A probe that proved nothing (no connection tried, a kept session): the next pick probes again.
    if (h.out) h.probeAt = undefined;
  }

  /** Whether the source is in its pools (not out; a probe due still counts as out), for postrider_source_available. */
  available(source: string): boolean {
    return this.health.get(source)?.out !== true;
  }

  /** Every configured source with available(), in configuration order. */
  availability(): { source: string; available: boolean }[] {
    return this.o.sources.map((s) => ({ source: s.name, available: this.available(s.name) }));
  }

  view(source: string): Promise<SourceHealthView> {
    const h = this.health.get(source);
    const iso = (ms: number | undefined) => (ms === undefined ? null : new Date(ms).toISOString());
    return Promise.resolve({
      status: h?.out ? 'out' : 'ok',
      since: iso(h?.since),
      until: h?.out ? iso(h.until) : null,
      reason: h?.reason ?? null,
      cause: h?.cause ?? null,
      consecutiveFailures: h?.failures ?? 0,
    });
  }

  private stateOf(source: string): Health {
    let h = this.health.get(source);
    if (!h) this.health.set(source, (h = { out: false, failures: 0, streakSites: new Set(), backoffMs: FIRST_BACKOFF_MS }));
    return h;
  }

  /** A connection that never opened: one more in the streak; out once the streak is the source's fault. */
  private failed(attempt: SourceAttempt, h: Health, now: number): void {
    if (h.failures === 0) h.streakStart = now;
    h.failures++;
    if (h.streakSites.size < MAX_STREAK_SITES) h.streakSites.add(attempt.site);
    if (h.out) return this.goOut(attempt.source, h, h.cause!, now, 'its probe attempt opened no connection either');
    if (h.failures >= FAILURES_TO_TAKE_OUT && this.sitesOthersReach(attempt.source, h) >= MIN_SITES) {
      const reason = `${h.failures} connections in a row opened nothing (refused, unreachable or no greeting) at ${h.streakSites.size} sites, where other sources get through`;
      this.goOut(attempt.source, h, 'connect_failures', now, reason);
    }
  }

  /** The streak's sites where another source got a reply since shortly before the streak began. */
  private sitesOthersReach(source: string, h: Health): number {
    const from = h.streakStart! - REACH_WINDOW_MS;
    let n = 0;
    for (const site of h.streakSites) {
      const bySource = this.reached.get(site);
      if (bySource && [...bySource].some(([other, at]) => other !== source && at >= from)) n++;
    }
    return n;
  }

  private succeeded(source: string, h: Health, now: number): void {
    const wasOut = h.out;
    const outSince = h.since;
    h.failures = 0;
    h.streakSites.clear();
    h.streakStart = undefined;
    h.backoffMs = FIRST_BACKOFF_MS;
    if (!wasOut) return;
    Object.assign(h, { out: false, since: now, until: undefined, probeAt: undefined, bind: undefined });
    this.o.logger.info({ source, address: this.addresses.get(source), outSince: new Date(outSince!).toISOString() }, 'sending source back in its pools');
  }

  /** Out for the current backoff (the next one doubles); `reason` defaults to the cause's. */
  private goOut(source: string, h: Health, cause: HealthCause, now: number, reason?: string): void {
    const address = this.addresses.get(source);
    reason ??= cause === 'address_unavailable' ? `address ${address} is not on this machine (EADDRNOTAVAIL)` : h.reason;
    const again = h.out;
    Object.assign(h, { out: true, since: again ? h.since : now, until: now + h.backoffMs, reason, cause, probeAt: undefined, bind: undefined });
    h.backoffMs = Math.min(h.backoffMs * 2, MAX_BACKOFF_MS);
    const until = new Date(h.until!).toISOString();
    this.o.logger.warn({ source, address, reason, until, consecutiveFailures: h.failures }, again ? 'sending source still failing, out of its pools again' : 'sending source out of its pools');
  }

  /** A missing address is probed by binding it, not with a message; once it binds, one attempt may go. */
  private startBindCheck(source: string, h: Health, now: number): void {
    if (h.bind === 'running') return;
    h.bind = 'running';
    const address = this.addresses.get(source);
    const done = (ok: boolean) => {
      if (this.health.get(source) !== h || h.bind !== 'running') return;
      if (ok) h.bind = 'passed';
      else this.goOut(source, h, 'address_unavailable', now);
    };
    (address === undefined ? Promise.resolve(true) : this.bindable(address)).then(done, () => done(false));
  }

  private markReached(site: string, source: string, now: number): void {
    let bySource = this.reached.get(site);
    if (bySource) this.reached.delete(site);
    else bySource = new Map();
    // Re-inserted: the map's order is by last reply, so the first key is the one to forget.
    this.reached.set(site, bySource.set(source, now));
    if (this.reached.size > MAX_SITES) this.reached.delete(this.reached.keys().next().value!);
  }
}

/** Whether this machine has the address now: a listen on it (any free port) works. */
export function canBind(address: string): Promise<boolean> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.once('error', () => resolve(false));
    server.listen({ host: address, port: 0, exclusive: true }, () => server.close(() => resolve(true)));
  });
}
