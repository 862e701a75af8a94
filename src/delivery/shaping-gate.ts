/**
 * Automatic shaping (issue 35) as a SourceGate (source-gates.ts): a reply that matches a
 * shaping rule (domain/shaping-rules.ts; the operator's delivery.shaping first) takes the source
 * that received it out of its pool at that site, or holds it to a ceiling there, for the rule's
 * duration, in the whole cluster:
 *
 *  - observe() matches each attempt's summary reply and every recipient's; the first match is
 *    written to the coordination's expiring entries (`source-shaping`) and to this node's view
 *    at once. A repeated match while it holds moves its end on (never a second entry);
 *  - check() refuses a suspended source at the site until the end, limits() gives a ceiling's
 *    concurrency and rate, both from this node's view, which start() refreshes from the
 *    coordination every REFRESH_EVERY_MS so that every node honours what one node saw;
 *  - view() shows a source's shapings in GET /ops/sources; lift() ends one early (the
 *    operator's DELETE /ops/sources/{source}/shaping/{site}).
 *
 * Every change is one log line: a warn when a rule starts to hold (or another rule replaces
 * it), an info when one ends, by its expiry or by an operator.
 */
import type { Coordination, ExpiringEntries } from '../coordination/port.js';
import type { AttemptResult } from '../domain/delivery-result.js';
import { matchShapingRule, type CompiledShapingRule, type ShapingReply } from '../domain/shaping-match.js';
import type { Logger } from '../log/logger.js';
import type { Clock, Timer } from '../queue/clock.js';
import { decodeShaping, encodeShaping, PROVIDER_TARGET, shapingKey, targetsOf, type Shaping } from './shaping-entries.js';
import { SiteProviders } from './site-provider.js';
import { siteHosts } from './sites.js';
import type { GateRefusal, SourceAttempt, SourceGate, SourceSiteCeiling } from './source-gates.js';

/** How often a node reads the cluster's shapings (another node's new suspension reaches it within this). */
export const REFRESH_EVERY_MS = 10_000;

export interface ShapingGateOptions {
  coordination: Pick<Coordination, 'entries'>;
  /** compileShapingRules(config.delivery.shaping). */
  rules: readonly CompiledShapingRule[];
  logger: Logger;
  /** Its timers run the refresh; its now() is the time of a refresh and of lift(). */
  clock: Clock;
}

/** A shaping as GET /ops/sources shows it. */
export interface ShapingView {
  /** The site, or `provider:<id>` for a rule that holds at every site of a provider: the {site} of DELETE. */
  site: string;
  /** The site whose reply triggered it. */
  triggeredBy: string;
  rule: string;
  action: Shaping['action'];
  since: string;
  until: string;
}

export class ShapingGate implements SourceGate {
  readonly name = 'shaping';
  private readonly entries: ExpiringEntries;
  private readonly providers = new SiteProviders();
  private shapings = new Map<string, Shaping>();
  /** Bumped by each local change: a refresh that started before it keeps what the change wrote. */
  private changes = 0;
  private readonly changedAt = new Map<string, number>();
  /** Keys whose write to the coordination is under way: a refresh keeps this node's value of them. */
  private readonly writing = new Map<string, number>();
  private timer: Timer | undefined;
  private stopped = false;

  constructor(private readonly o: ShapingGateOptions) {
    this.entries = o.coordination.entries('source-shaping');
  }

  check(source: string, site: string, now: number): GateRefusal | undefined {
    for (const s of this.holding(source, site, now)) {
      if (s.action.kind === 'suspend') return { gate: this.name, reason: `shaping: ${s.rule} suspended ${source} at ${s.target} (reply from ${s.site})`, until: s.until };
    }
    return undefined;
  }

  limits(source: string, site: string, now: number): SourceSiteCeiling | undefined {
    let ceiling: SourceSiteCeiling | undefined;
    for (const s of this.holding(source, site, now)) {
      if (s.action.kind !== 'ceiling') continue;
      // A provider's ceiling is counted over all its sites (SourceSiteCeiling.scope), and wins the scope over a site's.
      const scope = s.target.startsWith('provider:') || ceiling?.scope === undefined ? s.target : ceiling.scope;
      ceiling = { concurrency: lowest(ceiling?.concurrency, s.action.concurrency), perSecond: lowest(ceiling?.perSecond, s.action.perSecond), scope };
    }
    return ceiling;
  }

  observe(attempt: SourceAttempt, result: AttemptResult, _startedAt: number, now: number): void {
    try {
      const provider = this.providers.providerOf(attempt.site, result.mx);
      const hosts = result.mx === undefined ? siteHosts(attempt.site) : [...siteHosts(attempt.site), result.mx.toLowerCase()];
      const replies: ShapingReply[] = [{ smtpCode: result.smtpCode, enhancedCode: result.enhancedCode, text: result.response }, ...result.recipients.map((r) => ({ smtpCode: r.smtpCode, enhancedCode: r.enhancedCode, text: r.response }))];
      for (const reply of replies) {
        const rule = matchShapingRule(this.o.rules, reply, provider, hosts);
        if (rule) return this.apply(rule, attempt, reply, now);
      }
    } catch (err) {
      this.o.logger.error({ err, source: attempt.source, site: attempt.site }, 'automatic shaping could not read an attempt');
    }
  }

  /** The source's shapings that hold now, from the cluster's entries; undefined (nothing shown) when none. */
  async view(source: string, now: number): Promise<{ active: ShapingView[] } | undefined> {
    await this.refresh();
    const active = [...this.shapings.values()].filter((s) => s.source === source && s.until > now).sort((a, b) => a.since - b.since);
    if (active.length === 0) return undefined;
    return { active: active.map((s) => ({ site: s.target, triggeredBy: s.site, rule: s.rule, action: s.action, since: iso(s.since), until: iso(s.until) })) };
  }

  /** Ends a shaping of `source` at `target` (a site, or `provider:<id>`) now; false when none holds. */
  async lift(source: string, target: string): Promise<boolean> {
    const key = shapingKey(source, target);
    const now = this.o.clock.now();
    const held = this.shapings.get(key);
    const deleted = await this.entries.delete(key, now);
    this.changes++;
    this.changedAt.set(key, this.changes);
    this.shapings.delete(key);
    if (!deleted && !(held && held.until > now)) return false;
    this.o.logger.info({ source, site: target, rule: held?.rule }, 'automatic shaping lifted by an operator');
    return true;
  }

  async start(): Promise<void> {
    await this.refresh().catch((err: unknown) => this.o.logger.warn({ err }, 'automatic shaping: reading the cluster’s shapings failed'));
    this.schedule();
  }

  stop(): void {
    this.stopped = true;
    this.timer?.cancel();
  }

  /** Reads the cluster's shapings into this node's view; logs those that ended since. */
  async refresh(): Promise<void> {
    const started = this.changes;
    const now = this.o.clock.now();
    const listed = await this.entries.list(now);
    const next = new Map<string, Shaping>();
    for (const e of listed) {
      const s = decodeShaping(e.value, e.until);
      if (s) next.set(e.key, s);
    }
    for (const [key, s] of this.shapings) {
      // Written here after the read began: the read may not have seen it yet.
      if ((this.changedAt.get(key) ?? 0) > started || this.writing.has(key)) next.set(key, s);
      else if (!next.has(key) && s.until <= now) this.logLifted(s);
    }
    for (const [key, changed] of this.changedAt) if (changed <= started) this.changedAt.delete(key);
    for (const key of [...next.keys()]) if (this.changedAt.has(key) && !this.shapings.has(key)) next.delete(key);
    this.shapings = next;
  }

  private apply(rule: CompiledShapingRule, attempt: SourceAttempt, reply: ShapingReply, now: number): void {
    const target = rule.provider !== undefined ? PROVIDER_TARGET + rule.provider : attempt.site;
    const key = shapingKey(attempt.source, target);
    const held = this.shapings.get(key);
    const holding = held !== undefined && held.until > now;
    const until = Math.max(now + rule.durationMs, holding && held.rule === rule.id ? held.until : 0);
    const s: Shaping = { source: attempt.source, target, site: attempt.site, rule: rule.id, action: rule.action, since: holding ? held.since : now, until };
    this.changes++;
    this.changedAt.set(key, this.changes);
    this.shapings.set(key, s);
    if (!holding || held.rule !== rule.id) {
      const fields = { source: s.source, site: target, rule: rule.id, origin: rule.origin, action: describe(rule), until: iso(until), reply: reply.text.slice(0, 200) };
      this.o.logger.warn(fields, 'automatic shaping: a reply matched a rule; the source is shaped at the site');
    }
    this.writing.set(key, (this.writing.get(key) ?? 0) + 1);
    this.entries
      .set(key, encodeShaping(s), until)
      .catch((err: unknown) => this.o.logger.warn({ err, source: s.source, site: target }, 'automatic shaping: writing a shaping to the cluster failed; it holds on this node until its next refresh'))
      .finally(() => {
        const left = (this.writing.get(key) ?? 1) - 1;
        if (left > 0) this.writing.set(key, left);
        else this.writing.delete(key);
      });
  }

  /** The shapings of a source at a site that hold at `now`; those that ended are dropped (and logged). */
  private *holding(source: string, site: string, now: number): Generator<Shaping> {
    if (this.shapings.size === 0) return;
    for (const target of targetsOf(site, this.providers.providerOf(site))) {
      const key = shapingKey(source, target);
      const s = this.shapings.get(key);
      if (!s) continue;
      if (s.until > now) yield s;
      else {
        this.shapings.delete(key);
        this.logLifted(s);
      }
    }
  }

  private logLifted(s: Shaping): void {
    this.o.logger.info({ source: s.source, site: s.target, rule: s.rule, until: iso(s.until) }, 'automatic shaping ended: its time is up');
  }

  private schedule(): void {
    if (this.stopped) return;
    this.timer = this.o.clock.setTimer(() => {
      this.refresh()
        .catch((err: unknown) => this.o.logger.warn({ err }, 'automatic shaping: reading the cluster’s shapings failed'))
        .finally(() => this.schedule());
    }, REFRESH_EVERY_MS);
  }
}

function lowest(a: number | undefined, b: number | undefined): number | undefined {
  return a === undefined ? b : b === undefined ? a : Math.min(a, b);
}

function describe(rule: CompiledShapingRule): string {
  if (rule.action.kind === 'suspend') return 'suspend';
  const parts = [rule.action.concurrency !== undefined ? `${rule.action.concurrency} session(s)` : '', rule.action.perSecond !== undefined ? `${rule.action.perSecond}/s` : ''];
  return `ceiling ${parts.filter(Boolean).join(', ')}`;
}

function iso(ms: number): string {
  return new Date(ms).toISOString();
}
