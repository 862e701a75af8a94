/**
 * The source (local address and EHLO name) of each delivery attempt (issue 35): the message's
 * pool is its channel's ipPool, else delivery.defaultPools of its mail type, else "default"
 * (domain/sending-ips.ts); within the pool, SourceChooser's smooth weighted round robin over the
 * sources that may carry mail to the attempt's site now:
 *
 *  - every gate (source-gates.ts: warm-up, shaping, health) lets it (check(), then reserve()
 *    once picked; a refused reservation sends the picker back to the chooser without it);
 *  - it has a session free at the site (source-sessions.ts: the site's concurrency per source,
 *    lowered by its own "slow down" replies and by the gates' ceilings).
 *
 * When no source may, because the ones the gates allow are all busy at the site, the attempt
 * waits for a session of the site to end and asks again (as a full site's probe waits in
 * site-concurrency.ts). When the gates refuse every source, the answer is their refusals: the
 * dispatcher defers the attempt (retried on the schedule, never bounced).
 *
 * A pool of IPv4 and IPv6 sources gives an attempt only a source of a family its MX hosts have
 * (`mxFamilies`, the delivery resolver's cached MX lookup): a socket bound to one family cannot
 * reach an address of the other (target-family.ts), and most receivers have IPv4 only. A pool
 * of one family is not asked: its attempt to an MX of the other defers on its own (4.4.4).
 *
 * Each configured source also has its own pacer beside the dispatcher's global one (the
 * coordination's, so shared by every node of a cluster): at most its rate (its own `rate`, else
 * delivery.rate) at the receivers; a gate's perSecond ceiling at a site adds one more. All are
 * awaited before the global slot.
 *
 * With no source configured the one answer is the kernel's choice (no bind, hostname in EHLO):
 * no channel read, no gate, no pacer or session count of its own, exactly the delivery before
 * sources existed.
 */
import net from 'node:net';
import type { Coordination, SharedPacer } from '../coordination/port.js';
import type { AttemptResult } from '../domain/delivery-result.js';
import { SourceChooser } from '../domain/source-chooser.js';
import { KERNEL_SOURCE_NAME, poolOf, type SendingIps, type SendingSource } from '../domain/sending-ips.js';
import type { MessageRecord } from '../domain/types.js';
import type { AbortLike } from './attempt-abort.js';
import type { FeedbackChange } from './concurrency-feedback.js';
import type { GateRefusal, SourceAttempt, SourceGate, SourceSiteCeiling } from './source-gates.js';
import { SourceSessions } from './source-sessions.js';

/** How long a channel's ipPool is remembered: a PATCH reaches delivery within this. */
const CHANNEL_POOL_TTL_MS = 10_000;

export interface PickedSource extends SendingSource {
  pool: string;
}

/** A source picked for one attempt: `end()` ends its session at the site (once). */
export interface SourceTurn {
  source: PickedSource;
  attempt: SourceAttempt | undefined;
  end(): void;
}

/** No source of the pool may carry the attempt now: why, per source. */
export interface NoSource {
  pool: string;
  refusals: { source: string; refusal: GateRefusal }[];
}

export interface SourcePickerOptions {
  ips: SendingIps;
  /** The channel's ipPool (store.channels.get), undefined when it has none or is gone. */
  channelPool: (channelId: string) => Promise<string | undefined>;
  coordination: Pick<Coordination, 'pacer'>;
  /** delivery.rate: a source's rate when it has none of its own. */
  defaultRate: number;
  /**
   * The address families (4, 6) of the recipient domain's MX addresses, undefined when unknown
   * (the MX lookup failed): asked only for a pool of both families.
   */
  mxFamilies?: (domain: string) => Promise<ReadonlySet<number> | undefined>;
  /** The site's configured concurrency (site-limits.ts). */
  siteLimit: (site: string) => number;
  gates?: readonly SourceGate[];
  now: () => number;
  /** A source's concurrency at a site changed (its "slow down" feedback), for the log. */
  onChange?: (change: FeedbackChange & { source: string; site: string }) => void;
  /**
   * A channel names an ipPool that delivery.pools no longer has (removed from the config since
   * the channel was saved): its mail goes out through its mail type's default pool (poolOf), which
   * the operator is told once per channel and pool, for the log.
   */
  onUnknownPool?: (channelId: string, pool: string) => void;
}

export class SourcePicker {
  private readonly chooser = new SourceChooser();
  private readonly pools = new Map<string, { pool: string | undefined; at: number }>();
  private readonly pacers = new Map<string, SharedPacer>();
  private readonly gates: readonly SourceGate[];
  private readonly sessions: SourceSessions;
  /** Each source's address family (4 or 6), and the pools holding sources of both. */
  private readonly families = new Map<string, number>();
  private readonly mixedPools = new Set<string>();

  constructor(private readonly o: SourcePickerOptions) {
    this.gates = o.ips.configured ? (o.gates ?? []) : [];
    for (const s of o.ips.sources.values()) if (s.address !== undefined) this.families.set(s.name, net.isIP(s.address));
    for (const [pool, members] of o.ips.pools) if (new Set(members.map((m) => this.families.get(m.source))).size > 1) this.mixedPools.add(pool);
    this.sessions = new SourceSessions({ siteLimit: o.siteLimit, ceiling: (source, site) => this.ceiling(source, site), now: o.now, onChange: o.onChange });
  }

  get configured(): boolean {
    return this.o.ips.configured;
  }

  /** Starts the gates' background work (a cluster view's refresh). */
  async start(): Promise<void> {
    for (const gate of this.gates) await gate.start?.();
  }

  async stop(): Promise<void> {
    for (const gate of this.gates) await gate.stop?.();
  }

  /**
   * The source of the next attempt of `message` to `where` (its recipient domain and site key),
   * waiting while the allowed sources are busy at the site; NoSource when the gates refuse every
   * source of the pool, or `signal` ended the wait.
   */
  async pick(message: Pick<MessageRecord, 'channelId' | 'mailType'>, where: { domain: string; site: string }, signal: AbortLike): Promise<SourceTurn | NoSource> {
    // Object.assign, not {...source, pool}: a field the spread's source lacks costs V8 new hidden
    // classes on every call, about 2 µs per attempt (bench/RESULTS.md, issue 36).
    if (!this.o.ips.configured) return { source: Object.assign({}, this.o.ips.sources.get(KERNEL_SOURCE_NAME)!, { pool: 'default' }), attempt: undefined, end: () => {} };
    const pool = poolOf(this.o.ips, message.mailType, await this.poolOfChannel(message.channelId));
    const families = this.mixedPools.has(pool) ? await this.o.mxFamilies?.(where.domain) : undefined;
    for (;;) {
      const seen = this.sessions.ended;
      const round = await this.tryPool(pool, where, families);
      if (!('busy' in round)) return round;
      if (!round.busy || !(await this.sessions.waitForRoom(where.site, seen, signal))) return { pool, refusals: round.refusals };
    }
  }

  /**
   * One pass over the pool: a turn, or the refusals and whether a source was only busy. Sources
   * of a family outside `families` (when it names any) are passed over, as if not in the pool.
   */
  private async tryPool(pool: string, where: { domain: string; site: string }, families?: ReadonlySet<number>): Promise<SourceTurn | (NoSource & { busy: boolean })> {
    const members = this.o.ips.pools.get(pool) ?? [];
    const refused = new Map<string, GateRefusal>();
    let busy = false;
    const now = this.o.now();
    const open = (source: string) => {
      if (refused.has(source)) return false;
      if (families !== undefined && families.size > 0 && !families.has(this.families.get(source)!)) return false;
      const refusal = this.refusal(source, where.site, now);
      if (refusal) refused.set(source, refusal);
      else if (!this.sessions.hasRoom(source, where.site)) busy = true;
      else return true;
      return false;
    };
    for (let name = this.chooser.pick(pool, members, open); name !== undefined; name = this.chooser.pick(pool, members, open)) {
      const attempt: SourceAttempt = { source: name, pool, ...where };
      const refusal = await this.reserve(attempt, now);
      if (refusal) {
        refused.set(name, refusal);
        continue;
      }
      return { source: Object.assign({}, this.o.ips.sources.get(name)!, { pool }), attempt, end: this.sessions.acquire(name, where.site) };
    }
    return { pool, busy, refusals: [...refused].map(([source, refusal]) => ({ source, refusal })) };
  }

  private refusal(source: string, site: string, now: number): GateRefusal | undefined {
    for (const gate of this.gates) {
      const refusal = gate.check(source, site, now);
      if (refusal) return refusal;
    }
    return undefined;
  }

  /** Each reserving gate in turn; the first that refuses names why (a unit an earlier gate took is spent). */
  private async reserve(attempt: SourceAttempt, now: number): Promise<GateRefusal | undefined> {
    for (const gate of this.gates) {
      if (gate.reserve && !(await gate.reserve(attempt, now))) return gate.check(attempt.source, attempt.site, this.o.now()) ?? { gate: gate.name, reason: `${gate.name}: no room for ${attempt.site} now` };
    }
    return undefined;
  }

  /**
   * Tells the gates the outcome of an attempt the source carried, under `site` (the site key now:
   * the MX lookup may have named it since the pick), and lowers the source's concurrency there
   * on a "slow down".
   */
  observe(turn: SourceTurn, result: AttemptResult, startedAt: number, slowsDown: boolean, site: string): void {
    if (!turn.attempt) return;
    const attempt = { ...turn.attempt, site };
    if (slowsDown) this.sessions.slowDown(attempt.source, attempt.site, startedAt);
    const now = this.o.now();
    for (const gate of this.gates) gate.observe?.(attempt, result, startedAt, now);
  }

  /** The lowest ceiling the gates set for the source at the site now (the scope of the first gate that names one). */
  private ceiling(source: string, site: string): SourceSiteCeiling | undefined {
    let out: SourceSiteCeiling | undefined;
    const now = this.o.now();
    for (const gate of this.gates) {
      const c = gate.limits?.(source, site, now);
      if (!c) continue;
      out ??= {};
      if (c.concurrency !== undefined) out.concurrency = Math.min(out.concurrency ?? Infinity, c.concurrency);
      if (c.perSecond !== undefined) out.perSecond = Math.min(out.perSecond ?? Infinity, c.perSecond);
      out.scope ??= c.scope;
    }
    return out;
  }

  /**
   * Waits for a slot of each pacer the attempt is under (the source's own, then a gate's
   * ceiling at the site; real time, as the global pacer's wait), then for the global slot
   * (`global`, the dispatcher's beforeBody).
   */
  beforeBody(turn: SourceTurn, global: () => Promise<void> | undefined): Promise<void> | undefined {
    if (!turn.attempt) return global();
    const pacers = [this.pacerOf(turn.source.name, this.o.ips.sources.get(turn.source.name)?.rate ?? this.o.defaultRate)];
    const ceiling = this.ceiling(turn.attempt.source, turn.attempt.site);
    // Per scope: a provider-wide ceiling paces the source at all of the provider's sites together.
    if (ceiling?.perSecond !== undefined) pacers.push(this.pacerOf(`${turn.attempt.source}@${ceiling.scope ?? turn.attempt.site}:${ceiling.perSecond}`, ceiling.perSecond));
    return waitForPacers(pacers, global);
  }

  private pacerOf(name: string, perSecond: number): SharedPacer {
    let pacer = this.pacers.get(name);
    if (!pacer) {
      pacer = this.o.coordination.pacer(`delivery-receivers:${name}`, { perSecond });
      this.pacers.set(name, pacer);
    }
    return pacer;
  }

  private async poolOfChannel(channelId: string): Promise<string | undefined> {
    const now = this.o.now();
    const known = this.pools.get(channelId);
    if (known && now - known.at < CHANNEL_POOL_TTL_MS) return known.pool;
    const pool = await this.o.channelPool(channelId);
    this.pools.set(channelId, { pool, at: now });
    if (pool !== undefined && !this.o.ips.pools.has(pool) && known?.pool !== pool) this.o.onUnknownPool?.(channelId, pool);
    return pool;
  }
}

/** Takes a slot of each pacer in order (waiting out the first that has none), then the global one. */
function waitForPacers(pacers: readonly SharedPacer[], global: () => Promise<void> | undefined): Promise<void> | undefined {
  for (let i = 0; i < pacers.length; i++) {
    const ms = pacers[i]!.take();
    if (ms > 0) return new Promise<void>((resolve) => setTimeout(resolve, ms)).then(() => waitForPacers(pacers.slice(i), global));
  }
  return global();
}

/** The deferral text of an attempt no source could carry: the pool and each source's reason (capped). */
export function noSourceText(n: NoSource): string {
  const reasons = n.refusals.map((r) => `${r.source}: ${r.refusal.reason}`).join('; ');
  const text = `no source of IP pool "${n.pool}" may send now${reasons ? ` (${reasons})` : ''}`;
  return text.length > 500 ? `${text.slice(0, 497)}...` : text;
}
