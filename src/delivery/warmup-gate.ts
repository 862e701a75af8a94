/**
 * The warm-up gate (issue 35, README "Sending IPs"): a source with a warm-up plan
 * (delivery.sources[].warmup, domain/warmup-plan.ts) carries at most its curve's messages a day
 * to each provider (or, outside the provider table, to each site), and the hourly share of that
 * (hourlyCap), until its curves end.
 *
 * The counts are the cluster's: reserve() adds one message to the day's and the hour's counter
 * of the site key through the coordination's counters, atomically and only when both stay
 * within their caps, so the nodes together never pass a cap. A refusal sends the picker to
 * another source of the pool (a warm one carries the mail), and when the pool has none left
 * the message is deferred with the picker's noSource reason, never bounced.
 *
 * check() answers from this node alone, without a round trip: a key that an answer of the
 * coordination showed full is refused until its window ends (the end of the UTC day, or of the
 * hour). What other nodes spend meanwhile this node learns at its next reserve().
 *
 * A unit is taken per attempt, before it connects: an attempt that then fails still counts (the
 * provider saw the connection, and counters are never given back, which keeps the caps simple and
 * safe in a cluster).
 */
import type { Coordination } from '../coordination/port.js';
import type { DnsAnswer, MxRecord } from '../dns/resolver.js';
import type { SendingIps } from '../domain/sending-ips.js';
import { capsAt, resolveWarmupPlan, windowEnds, type WarmupCaps, type WarmupPlan } from '../domain/warmup-plan.js';
import type { GateRefusal, SourceAttempt, SourceGate } from './source-gates.js';
import { SiteProviders } from './site-provider.js';
import { siteName } from './sites.js';
import { counterName, siteKeyOf, windowKeys } from './warmup-keys.js';
import { warmupView, type WarmupView } from './warmup-view.js';

export const WARMUP_GATE = 'warmup';
/** Known-full keys remembered at most; expired ones are dropped first. */
const MAX_FULL = 10_000;

export interface WarmupGateOptions {
  ips: SendingIps;
  coordination: Pick<Coordination, 'counters'>;
  providers?: SiteProviders;
  /**
   * The MX lookup (the delivery resolver, whose cache the attempt's own lookup then hits): the
   * picker names a domain's site only once this process resolved it, so the first attempts to
   * gmail.com after a start come with site "gmail.com", which is Google's all the same.
   */
  dns?: { mx(name: string): Promise<DnsAnswer<MxRecord[]>> };
  /** A reserve could not reach the coordination (it then refuses: the counts are unknown). */
  onError?: (err: unknown, attempt: SourceAttempt) => void;
}

export class WarmupGate implements SourceGate {
  readonly name = WARMUP_GATE;
  private readonly plans = new Map<string, { plan: WarmupPlan; start: string }>();
  private readonly providers: SiteProviders;
  /** "source NUL key" → refused until. */
  private readonly full = new Map<string, GateRefusal & { until: number }>();

  constructor(private readonly o: WarmupGateOptions) {
    this.providers = o.providers ?? new SiteProviders();
    for (const s of o.ips.sources.values()) if (s.warmup) this.plans.set(s.name, { plan: resolveWarmupPlan(s.warmup), start: s.warmup.start });
  }

  /** The sources with a plan. */
  get sources(): string[] {
    return [...this.plans.keys()];
  }

  /** Whether any source warms up (the daemon adds the gate only then). */
  get active(): boolean {
    return this.plans.size > 0;
  }

  check(source: string, site: string, now: number): GateRefusal | undefined {
    if (!this.plans.has(source)) return undefined;
    const known = this.full.get(`${source}\u0000${siteKeyOf(this.providers, site).key}`);
    return known && known.until > now ? known : undefined;
  }

  async reserve(attempt: SourceAttempt, now: number): Promise<boolean> {
    const entry = this.plans.get(attempt.source);
    if (!entry) return true;
    const site = siteKeyOf(this.providers, await this.siteOf(attempt));
    const caps = capsAt(entry.plan, site.curve, now);
    if (!caps) return true;
    const keys = windowKeys(site.key, now);
    const ends = windowEnds(now);
    let answer;
    try {
      answer = await this.o.coordination.counters(counterName(attempt.source)).add([
        { key: keys.day, cap: caps.perDay, ttlMs: ends.day - now },
        { key: keys.hour, cap: caps.perHour, ttlMs: ends.hour - now },
      ]);
    } catch (err) {
      this.o.onError?.(err, attempt);
      return false;
    }
    // Under the picker's key too, so that its check() of the refused source names the reason.
    for (const key of new Set([site.key, siteKeyOf(this.providers, attempt.site).key])) this.remember(attempt.source, key, site.key, caps, answer.counts, now);
    return answer.added;
  }

  /** The attempt's MX site: the picker's, or the MX lookup's while the picker knows only the domain. */
  private async siteOf(attempt: SourceAttempt): Promise<string> {
    if (attempt.site !== attempt.domain || !this.o.dns) return attempt.site;
    const answer = await this.o.dns.mx(attempt.domain).catch(() => undefined);
    const hosts = answer?.status === 'ok' ? answer.records.map((r) => r.exchange).filter((h) => h !== '') : [];
    return hosts.length > 0 ? siteName(hosts) : attempt.site;
  }

  view(source: string, now: number): Promise<WarmupView | undefined> {
    const entry = this.plans.get(source);
    if (!entry) return Promise.resolve(undefined);
    return warmupView({ ...entry, counters: this.o.coordination.counters(counterName(source)), now });
  }

  /** Marks the key full until its window's end once a count reached its cap. */
  private remember(source: string, key: string, counted: string, caps: WarmupCaps, counts: number[], now: number): void {
    const [day = 0, hour = 0] = counts;
    const ends = windowEnds(now);
    let refusal: (GateRefusal & { until: number }) | undefined;
    if (day >= caps.perDay) refusal = { gate: WARMUP_GATE, reason: `warm-up: ${day} of ${caps.perDay} messages to ${counted} today (day ${caps.day})`, until: ends.day };
    else if (hour >= caps.perHour) refusal = { gate: WARMUP_GATE, reason: `warm-up: ${hour} of ${caps.perHour} messages to ${counted} this hour (day ${caps.day})`, until: ends.hour };
    if (!refusal) return;
    if (this.full.size >= MAX_FULL) for (const [k, v] of this.full) if (v.until <= now) this.full.delete(k);
    if (this.full.size >= MAX_FULL) this.full.clear();
    this.full.set(`${source}\u0000${key}`, refusal);
  }
}
