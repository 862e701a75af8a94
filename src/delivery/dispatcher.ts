/**
 * DeliveryService: the dispatcher that turns due jobs into delivery attempts.
 *
 *   lease due jobs (bounded batch) → start attempts (rate limiter, per-site concurrency; a
 *   full site's next jobs are leased ahead and start the moment one of its slots frees)
 *   → each attempt sends its message in a pacer slot (delivery.rate at the receiver) and
 *   returns an outcome value → record (group commit with the outcomes finishing alongside)
 *   → pump again
 *
 * It sleeps until the next due time (one unref'd timer, no busy polling) and wakes early on the
 * coordination's 'queue' wake-up (the send path wakes it after a commit), on notify(), and
 * whenever an attempt finishes. The attempt budget and the pacer are the coordination's (shared
 * by every node of a cluster; coordination/port.ts). Its leases
 * carry this node's id (nodeId) and a generation (store/port/queue.ts, fencing); at start every
 * lease this node's previous process left goes back to due (at-least-once after a crash), and
 * so does any other node's that expired;
 * stop() stops leasing, waits for attempts in flight up to shutdown.graceMs, then aborts the
 * rest and gives their jobs back to the queue without counting an attempt.
 */
import fs from 'node:fs';
import net from 'node:net';
import { trustedRoots } from '../webhooks/pinned-https.js';
import type { Config } from '../config/schema.js';
import type { AttemptResult } from '../domain/delivery-result.js';
import { isAppError } from '../domain/errors.js';
import { nextAttemptAt, parseRetrySchedule, type RetrySchedule } from '../domain/retry.js';
import { firstDueMs } from '../domain/schedule.js';
import type { DeliveryJob } from '../domain/types.js';
import type { Logger } from '../log/logger.js';
import { systemClock, type Clock } from '../queue/clock.js';
import { WorkLoop } from '../queue/work-loop.js';
import { LocalCoordination } from '../coordination/local.js';
import { NODE_GONE_MS, type Coordination, type SharedPacer, type SharedRate, type SlotHold, type Slots } from '../coordination/port.js';
import { DeliveryQueue, type DueKey, type LeasedJob, type LoadedMessage, type RecordedOutcome } from '../queue/delivery-queue.js';
import type { StorePort } from '../store/port/index.js';
import { AddressPolicy } from './address-policy.js';
import { mxAttempt, type AttemptFn } from './attempt.js';
import type { StsPolicySource } from './sts-routing.js';
import type { TlsResultSink } from './tls-reporting.js';
import type { DaneSource } from './dane-routing.js';
import { MxResolver, type MxLookups } from './mx.js';
import { SiteConcurrency, type ConcurrencyChange } from './site-concurrency.js';
import { SiteLimitTable } from './site-limits.js';
import { ClusterSites } from './cluster-sites.js';
import { ConnectionCache } from './connection-cache.js';
import { ReadyJobs } from './ready-jobs.js';
import { AttemptAbort, type AbortLike } from './attempt-abort.js';
import { AttemptSummary } from './attempt-summary.js';
import { DEFAULT_SMTP_TIMEOUTS, type SmtpConnectionCache, type SmtpTimeouts } from './smtp-client.js';
import { slowsDown } from './smtp-results.js';
import { settledWithin } from '../domain/settle.js';
import { simulatedAttempt } from '../domain/sandbox-outcome.js';
import { resolveSendingIps } from '../domain/sending-ips.js';
import { noSourceText, SourcePicker, type NoSource, type SourceTurn } from './source-picker.js';
import type { SourceGate } from './source-gates.js';

/** The configuration delivery reads: delivery.*, the EHLO name, the return-path label and the grace period. */
export type DeliverySettings = Pick<Config, 'delivery' | 'hostname'> & {
  domains: Pick<Config['domains'], 'returnPathLabel'>;
  shutdown: Pick<Config['shutdown'], 'graceMs'>;
};

export interface DeliveryServiceOptions {
  store: StorePort;
  /**
   * This node's id: the owner of its queue leases. It must stay the same across restarts of the
   * node (the start takes back its own leases, and only another node's once expired). Default:
   * the coordination's node id, else 'local'.
   */
  nodeId?: string;
  /**
   * Former ids of this node whose leases its start takes back as its own: the LMDB daemon
   * passes 'local', the owner every lease had before the data folder had a node id (one node
   * per folder, so those leases can only be this node's previous run's).
   */
  formerNodeIds?: readonly string[];
  /**
   * Cluster mode: how often to look for nodes that stopped beating (Coordination.nodesGone) and
   * take their leases back; the dispatcher wakes for it even when idle. Undefined (one node):
   * never, as no other node can hold a lease.
   */
  goneNodeCheckMs?: number;
  /**
   * Cluster mode: the shared slots that count every node's sessions per site (cluster-sites.ts),
   * the coordination's slots('mx-site'). Undefined (one node): the dispatcher's own count is
   * the whole count.
   */
  siteSlots?: Slots;
  /**
   * The node's coordination (the daemon's): the 'queue' wake-up, the attempt budget and the
   * pacer. Default: a single-node one of its own on `clock`, as before the port.
   */
  coordination?: Coordination;
  config: DeliverySettings;
  /** A started DnsResolver (or anything with its mx/a/aaaa). */
  resolver: MxLookups;
  logger: Logger;
  clock?: Clock;
  /** Told about every recorded attempt (metrics); must not throw. */
  observer?: DeliveryObserver;
  /** Replaces MX resolution + SMTP (tests). */
  attempt?: AttemptFn;
  /**
   * What may take a configured sending source out of its pool per site (issue 35: warm-up,
   * shaping, a failing address; source-gates.ts). Ignored without delivery.sources.
   */
  sourceGates?: readonly SourceGate[];
  /** Recipient domains' MTA-STS policies (the daemon's MtaStsPolicies), applied to each attempt. */
  mtaSts?: StsPolicySource;
  /** DANE TLSA lookups (the daemon's, when dns.dnssecValidating), applied to each MX host. */
  dane?: DaneSource;
  /** TLS-RPT (the daemon's TlsRptService): told every TLS negotiation with an MX host. */
  tlsRpt?: TlsResultSink;
  timeouts?: Partial<SmtpTimeouts>;
  /** How long a lease lasts; must exceed attemptDeadlineMs. Default 30 minutes. */
  leaseMs?: number;
  /** An attempt still running after this is aborted (deferred). Default 15 minutes. */
  attemptDeadlineMs?: number;
  /** Attempts in flight at most. Default 10 × delivery.rate, between 10 and 1000. */
  maxInFlight?: number;
  /** Jobs leased per transaction at most. Default 100. */
  batchSize?: number;
  /** Longest sleep without a known due time (catches jobs queued by another process). Default 60 s. */
  idleCheckMs?: number;
}

export interface DeliveryObservation {
  /** The channel's delivery type (live or sandbox). */
  deliveryType: string;
  delivered: number;
  bounced: number;
  deferred: number;
  /** Seconds from acceptance (job creation) to this attempt's end. */
  ageSeconds: number;
  /** Whether the session was reused from the connection cache; absent when none was opened. */
  reused?: boolean;
}

export interface DeliveryObserver {
  onAttempt(o: DeliveryObservation): void;
}

interface InFlight {
  job: LeasedJob;
  abort: AttemptAbort;
  done: Promise<void>;
}

const RECOVERY_EVERY_MS = 60_000;
/**
 * Attempts waiting at the pacer at most before no more start (leadFull): each started attempt
 * then has about this many slot intervals (60 ms at 50/s) to reach the pacer before its slot
 * would go unused, and a session waits at most as long for its slot.
 */
const PACE_LEAD = 3;

/**
 * Jobs of a full site leased ahead, per slot of its concurrency. The lease that refills them is a
 * store write, queued behind the outcomes' group commits: 13–16 ms under a cap-lifted run here,
 * while an attempt on a reused connection takes about 7. With one job ahead per slot the queue
 * ran dry before each refill and every slot idled about 5 ms between messages (36% of its time;
 * 1,745 msg/s to smtp-sink); with three, 0.3 ms (2,746 msg/s; bench/RESULTS.md, delivery). At
 * 5,000 msg/s an attempt on a reused connection takes about 4 ms and a lease 4–7 ms (20 at
 * worst): with three ahead, 9% of the freed slots found none waiting; with six, 0.4-1.8%
 * (bench/RESULTS.md, issue 36). Jobs waiting here cost a map entry (a pass over them stops once
 * every domain with jobs waiting is full: ready-jobs.ts); stop() gives them back and a crash's
 * restart recovers them as every lease.
 */
export const LEASE_AHEAD_PER_SLOT = 6;
/** Due entries a lease scan reads at least (it reads twice the jobs it may start). */
const SCAN_MIN = 32;
const ABORT_WAIT_MS = 5_000;
const ERROR_BACKOFF_MS = 5_000;

/** Jobs due longer ago than this at start are reported late (logOverdueAtStart); a restart of a few seconds is not. */
const OVERDUE_AT_START_MS = 60_000;

export class DeliveryService {
  private readonly queue: DeliveryQueue;
  private readonly config: DeliverySettings;
  private readonly logger: Logger;
  private readonly clock: Clock;
  private readonly attempt: AttemptFn;
  /** Kept SMTP connections (connection-cache.ts), quit in stop(). */
  private readonly connections: SmtpConnectionCache;
  private readonly observer: DeliveryObserver | undefined;
  private readonly schedule: RetrySchedule;
  private readonly limiter: SharedRate;
  /** Slots for the end of DATA: delivery.rate at the receiver (rate-limiter.ts). */
  private readonly pacer: SharedPacer;
  private readonly coordination: Coordination;
  private offWake: (() => void) | undefined;
  /** Messages waiting for a pacer slot, in order, and the timer for the next slot. */
  private readonly paceQueue: Array<() => void> = [];
  private paceTimer: NodeJS.Timeout | undefined;
  /** Attempts in flight per MX site (sites.ts), with its limits and "slow down" feedback. */
  private readonly sites: SiteConcurrency;
  /** The sites' sessions on all nodes together (cluster mode; inert on one node). */
  private readonly clusterSites: ClusterSites;
  /** Ends every wait for a shared site slot at stop(): those jobs go back to the queue at once. */
  private siteWaits = new AbortController();
  private readonly siteLimits: SiteLimitTable;
  private readonly leaseMs: number;
  private readonly deadlineMs: number;
  private readonly maxInFlight: number;
  private readonly batchSize: number;
  private readonly idleCheckMs: number;
  private readonly inFlight = new Map<string, InFlight>();
  /**
   * Leased ahead, in due order: jobs of a site that was full when they were leased, started as
   * soon as one of its slots frees (startReady), without waiting for a lease commit in between.
   * At most the site's concurrency ahead per site; given back to the queue in stop(); after a
   * crash their leases are recovered like those of attempts in flight.
   */
  private readonly ready = new ReadyJobs();
  private running = false;
  private stopping = false;
  private readonly loop: WorkLoop;
  private rateBlocked = false;
  /** The last round leased no more because of maxInFlight: a recorded outcome makes room. */
  private inFlightBound = false;
  private cursor: DueKey | undefined;
  private lastRecoveryMs = 0;
  private lastGoneCheckMs = 0;
  /**
   * A lease scan or an attempt failed on a store error: the store may hold leases of ours that
   * this process does not (the lease committed but its answer was lost with the connection; a
   * leased job could not be loaded). The next round gives them back (recoverIfDue).
   */
  private ownLeasesInDoubt = false;
  private readonly goneNodeCheckMs: number | undefined;
  /** The minute's count of attempts, logged as one info line (attempt-summary.ts). */
  private readonly summary: AttemptSummary;
  /** The source (local address, EHLO name) of each attempt, from its message's pool (issue 35). */
  private readonly sources: SourcePicker;
  /** MX lookups (the resolver caches them): the attempt's, and the families a mixed pool's pick asks for. */
  private readonly mx: MxResolver;
  /** Roots for MX certificate checks: node's plus delivery.mtaSts.caFile (read at start), or node's alone. */
  private ca: string[] | undefined;

  constructor(o: DeliveryServiceOptions) {
    this.config = o.config;
    this.logger = o.logger.child({ component: 'delivery' });
    this.summary = new AttemptSummary(this.logger);
    this.clock = o.clock ?? systemClock();
    this.coordination = o.coordination ?? new LocalCoordination({ nodeId: o.nodeId ?? 'local', clock: this.clock });
    this.queue = new DeliveryQueue(o.store, o.nodeId ?? this.coordination.nodeId, o.formerNodeIds);
    this.observer = o.observer;
    this.loop = new WorkLoop({
      clock: this.clock,
      round: () => this.round(),
      onError: (err) => this.logger.error({ err }, 'delivery dispatcher could not lease jobs'),
      retryMs: ERROR_BACKOFF_MS,
    });
    const d = o.config.delivery;
    this.schedule = parseRetrySchedule(d.retrySchedule);
    // Real, monotonic time, as its waits are real timers (beforeBody): it spaces socket writes
    // (the single-node coordination's pacer reads performance.now).
    this.pacer = this.coordination.pacer('delivery-receivers', { perSecond: d.rate });
    // Starts at delivery.rate, a little faster than the pacer's slots (its margin), so that a
    // message is ready at the pacer for each slot: at the pacer's own rate every attempt that
    // took longer than the one before lost its slot for good (bench/rate-accuracy.mjs: a mean of
    // 45.7-48/s at 50 under load). What the starts gain is held to PACE_LEAD attempts waiting at
    // the pacer (leadFull), so sessions never pile up waiting for slots. Monotonic (the
    // coordination's clock.monotonic): it measures intervals, and on scheduler time a step
    // forward would refill it at once.
    this.limiter = this.coordination.rate('delivery-attempts', { perSecond: d.rate });
    this.siteLimits = new SiteLimitTable(d.perDomainConcurrency, d.sites);
    this.sites = new SiteConcurrency({
      limits: this.siteLimits.siteLimits,
      now: () => this.clock.now(),
      onChange: (c) => this.logConcurrency(c),
      probe: o.attempt === undefined,
    });
    this.clusterSites = new ClusterSites(o.siteSlots, this.logger);
    this.leaseMs = o.leaseMs ?? 30 * 60_000;
    this.deadlineMs = o.attemptDeadlineMs ?? Math.floor(this.leaseMs / 2);
    this.maxInFlight = o.maxInFlight ?? Math.min(1000, Math.max(10, d.rate * 10));
    this.batchSize = o.batchSize ?? 100;
    this.idleCheckMs = o.idleCheckMs ?? 60_000;
    this.goneNodeCheckMs = o.goneNodeCheckMs;
    this.sources = new SourcePicker({
      ips: resolveSendingIps(d, o.config.hostname),
      channelPool: async (id) => (await o.store.channels.get(id))?.ipPool,
      coordination: this.coordination,
      defaultRate: d.rate,
      siteLimit: (site) => this.siteLimits.siteLimits(site).concurrency,
      gates: o.sourceGates,
      mxFamilies: (domain) => this.mxFamilies(domain),
      now: () => this.clock.now(),
      onChange: (c) => this.logConcurrency(c, c.source),
      onUnknownPool: (channelId, pool) =>
        this.logger.warn({ channelId, ipPool: pool }, `channel ${channelId} names ipPool "${pool}", which delivery.pools does not have: its mail goes out through its mail type's default pool`),
    });
    this.connections = new ConnectionCache({ maxMessages: d.maxMessagesPerConnection, idleMs: d.connectionIdleMs });
    this.mx = this.mxResolver(o);
    this.attempt = o.attempt ?? this.mxAttempt(o);
  }

  /** MX resolution, which teaches the sites. */
  private mxResolver(o: DeliveryServiceOptions): MxResolver {
    // A domain's site learned (or changed) during an attempt: its waiting jobs may start now.
    const learner = {
      learn: (domain: string, site: string) => {
        if (this.sites.learn(domain, site)) this.kick();
      },
    };
    return new MxResolver(o.resolver, new AddressPolicy({ allowPrivate: o.config.delivery.allowPrivate }), Math.random, learner);
  }

  /** The real attempt: MX resolution (which teaches the sites), then SMTP over the connection cache. */
  private mxAttempt(o: DeliveryServiceOptions): AttemptFn {
    const d = o.config.delivery;
    return mxAttempt({
      mx: this.mx,
      port: d.port,
      heloName: o.config.hostname,
      returnPathLabel: o.config.domains.returnPathLabel,
      verpSecret: () => this.queue.verpSecret(),
      timeouts: { ...DEFAULT_SMTP_TIMEOUTS, ...o.timeouts },
      cache: this.connections,
      maxMessagesPerConnection: (site) => this.siteLimits.siteLimits(site).maxMessagesPerConnection,
      mtaSts: o.mtaSts,
      ca: () => this.ca,
      logger: this.logger,
      tlsRpt: o.tlsRpt,
      dane: o.dane,
    });
  }

  /** The address families (4, 6) of a domain's MX addresses, undefined when its MX lookup failed. */
  private async mxFamilies(domain: string): Promise<ReadonlySet<number> | undefined> {
    const r = await this.mx.resolve(domain);
    return r.status === 'ok' ? new Set(r.hosts.flatMap((h) => h.addresses.map((a) => net.isIP(a)))) : undefined;
  }

  /** Attempts running right now. */
  get inFlightCount(): number {
    return this.inFlight.size;
  }

  /**
   * The key a recipient domain's attempts are counted under (GET /queue shows it): its MX site
   * once an MX lookup of this process told it, else the domain itself (sites.ts).
   */
  siteOf(domain: string): string {
    return this.sites.keyOf(domain);
  }

  /**
   * One info line when jobs fell due more than a minute before this start (the daemon was down
   * at their time: scheduled sends, retries): they go now, late, and the log says how late.
   */
  private async logOverdueAtStart(): Promise<void> {
    const late = await this.queue.overdue(this.clock.now());
    if (late && late.lateMs >= OVERDUE_AT_START_MS) this.logger.info(late, 'delivery queue overdue at start: jobs due while the daemon was down are sent now, late');
  }

  async start(): Promise<void> {
    if (!this.config.delivery.enabled) {
      this.logger.info('delivery disabled (delivery.enabled=false): messages stay queued');
      return;
    }
    if (this.running) return;
    // The same extra CA as the policy hosts' (a private CA in tests): the MX certificates under
    // MTA-STS enforce must chain to it or to node's roots (RFC 8461 4.2).
    const caFile = this.config.delivery.mtaSts.caFile;
    this.ca = trustedRoots(caFile ? fs.readFileSync(caFile, 'utf8') : undefined);
    // Our leases are our previous process's (we hold none yet): they go back at once, with any
    // that expired; another node's live leases stay its own.
    const recovered = await this.queue.recover(this.clock.now(), { atStart: true });
    if (recovered > 0) this.logger.warn({ recovered }, 'delivery leases recovered from a previous run');
    await this.logOverdueAtStart();
    await this.sources.start();
    this.lastRecoveryMs = this.clock.now();
    this.running = true;
    this.stopping = false;
    this.siteWaits = new AbortController();
    this.logger.info({ rate: this.config.delivery.rate, perDomainConcurrency: this.config.delivery.perDomainConcurrency }, 'delivery started');
    // Jobs committed on any node (a send, a finished message, a retry asked through the API).
    this.offWake = this.coordination.onWake('queue', () => this.kick());
    this.loop.start();
  }

  /** New jobs were committed: look at the queue now instead of at the next planned wake-up. */
  notify(): void {
    this.kick();
  }

  async stop(): Promise<void> {
    if (!this.running) return;
    this.stopping = true;
    this.siteWaits.abort();
    this.offWake?.();
    this.offWake = undefined;
    await this.loop.stop();
    // Given back together: one group commit rather than one commit each, in turn.
    const now = this.clock.now();
    await Promise.all(this.ready.takeAll().map((job) => this.queue.release(job, now).catch(() => false)));
    const graceMs = this.config.shutdown.graceMs;
    if (this.inFlight.size > 0 && !(await settledWithin(this.allDone(), graceMs))) {
      this.logger.warn({ inFlight: this.inFlight.size }, 'delivery grace period over: aborting attempts, jobs go back to the queue');
      for (const f of this.inFlight.values()) f.abort.abort();
      if (!(await settledWithin(this.allDone(), ABORT_WAIT_MS))) {
        // Still hanging: give the leases back ourselves; a late outcome will be refused as stale.
        for (const f of this.inFlight.values()) await this.queue.release(f.job, this.clock.now()).catch(() => false);
      }
    }
    // Idle connections get their QUIT now; one still in use gets it when its attempt ends.
    await this.connections.close();
    await this.clusterSites.close();
    await this.sources.stop();
    this.summary.flush();
    this.running = false;
    this.logger.info('delivery stopped');
  }

  private allDone(): Promise<unknown> {
    return Promise.allSettled([...this.inFlight.values()].map((f) => f.done));
  }

  private kick(): void {
    if (!this.running || this.stopping) return;
    this.loop.kick();
  }

  /** One round: start what may start, then say when to look again at the latest. */
  private async round(): Promise<number> {
    if (!this.running || this.stopping) return this.clock.now() + this.idleCheckMs;
    const scannedAt = await this.fill();
    const now = this.clock.now();
    let at = now + this.idleCheckMs;
    if (this.goneNodeCheckMs !== undefined) at = Math.min(at, this.lastGoneCheckMs + this.goneNodeCheckMs);
    // Due after the last scan's time, not after now: a job that fell due while the lease was
    // being written (or when the timer fired a millisecond early) was not seen by the scan, and
    // looking only past now would leave it for the idle check, 60 s later. Such a time is not
    // in the future any more, so the next round runs at once.
    const next = await this.queue.nextDueAfter(scannedAt);
    if (next !== undefined) at = Math.min(at, next);
    if (this.rateBlocked) at = Math.min(at, now + this.limiter.msUntilAvailable());
    return at;
  }

  /** Starts as many attempts as the rate, the slots and the due jobs allow; returns the time of its last look at the due jobs. */
  private async fill(): Promise<number> {
    for (;;) {
      const now = this.clock.now();
      if (this.stopping) return now;
      await this.recoverIfDue(now);
      this.startReady();
      // A full lead (leadFull) is not a rate block: pace() kicks the pump when a slot frees one.
      const lead = this.leadFull();
      const tokens = lead ? 0 : this.limiter.available();
      const room = this.maxInFlight - this.inFlight.size - this.ready.size;
      const max = Math.min(this.batchSize - this.ready.size, room, tokens);
      this.rateBlocked = !lead && tokens <= 0;
      this.inFlightBound = room <= max;
      if (max <= 0) return now; // a finishing attempt or the rate timer wakes us
      const { accept, acceptDomain, startsNow } = this.planner();
      const from = this.cursor;
      // A short scan per round: when every site is at its limit (the steady state of a busy
      // queue), a round started by one finished attempt finds its one job near the cursor, and a
      // long scan would read (and refuse) thousands of busy entries per delivered message
      // (bench --profile: the lease scan was a sixth of the main thread). The round-robin cursor
      // carries the next round on from where this one stopped, so nothing is skipped for good.
      const scanLimit = Math.max(SCAN_MIN, 2 * max);
      const leased = await this.queue.lease({ nowMs: now, max, leaseMs: this.leaseMs, accept, acceptDomain, after: from, scanLimit }).catch((err: unknown) => {
        this.ownLeasesInDoubt = true;
        throw err;
      });
      this.cursor = leased.resumeAfter;
      let started = 0;
      const gone: LeasedJob[] = [];
      const deleted = this.queue.channelsDeletedOnce();
      for (const job of leased.jobs) {
        // Read again here: the lease's own check may have come before a delete whose 204 was
        // sent while the lease committed.
        if (deleted(job)) gone.push(job);
        else if (startsNow.has(job.id)) {
          this.launch(job);
          started++;
        } else this.ready.add(job);
      }
      this.limiter.take(started);
      this.discard(gone);
      if (leased.jobs.length < max) {
        // A scan that began at the round-robin cursor and reached the end of the due index has
        // not seen the jobs before the cursor: wrap around once. Without this, jobs skipped
        // earlier (their domain was busy) waited for the idle check when nothing else was in
        // flight to kick the pump (found by bench/delivery.mjs: a 60 s stall).
        if (from !== undefined && leased.resumeAfter === undefined) continue;
        // Jobs of a deleted channel were removed instead of leased: nothing wakes us for the due
        // jobs behind them (no attempt of theirs will finish), so the scan goes on now.
        if (leased.discarded > 0 && leased.resumeAfter !== undefined) continue;
        // Otherwise the queue has nothing to start now (skipped jobs wait for their domain's
        // attempts to finish, which kicks the pump).
        return now;
      }
    }
  }

  /**
   * What a lease scan takes: a job starts now while its site has room (planned starts per site
   * key, the site or the domain while its site is unknown: the key launch() counts under, so a
   * batch never plans past a site's room); a job of a full site is leased ahead while fewer
   * than LEASE_AHEAD_PER_SLOT times the site's concurrency wait in `ready`.
   */
  private planner(): { accept: (job: DeliveryJob) => boolean; acceptDomain: (domain: string) => boolean; startsNow: Set<string> } {
    const planned = new Map<string, number>();
    const ahead = new Map<string, number>();
    for (const [domain, n] of this.ready.domains()) {
      const key = this.sites.keyOf(domain);
      ahead.set(key, (ahead.get(key) ?? 0) + n);
    }
    const startsNow = new Set<string>();
    const canWait = (key: string) => (ahead.get(key) ?? 0) < LEASE_AHEAD_PER_SLOT * this.sites.limitOf(key);
    const accept = (job: DeliveryJob): boolean => {
      const key = this.sites.keyOf(job.domain);
      const n = planned.get(key) ?? 0;
      if (this.sites.hasRoom(job.domain, n)) {
        planned.set(key, n + 1);
        startsNow.add(job.id);
        return true;
      }
      if (!canWait(key)) return false;
      ahead.set(key, (ahead.get(key) ?? 0) + 1);
      return true;
    };
    const acceptDomain = (domain: string): boolean => {
      const key = this.sites.keyOf(domain);
      return this.sites.hasRoom(domain, planned.get(key) ?? 0) || canWait(key);
    };
    return { accept, acceptDomain, startsNow };
  }

  /** Starts the jobs leased ahead whose site has room now, in due order, as the rate allows. */
  private startReady(): void {
    if (this.stopping || this.ready.size === 0) return;
    const gone: LeasedJob[] = [];
    const deleted = this.queue.channelsDeletedOnce();
    // Domains found without room in this pass: they stay so until it ends (launches only take
    // room; a release comes in a later turn), so their other jobs are passed over with one set
    // lookup, and the pass ends once every domain with jobs waiting was found full (ready-jobs.ts
    // counts them). A freed slot starts one pass, and up to LEASE_AHEAD_PER_SLOT jobs per slot of
    // every full site wait here (120 in bench/delivery.mjs); each was once asked hasRoom, three
    // map reads, and its channel, on every pass (bench delivery --profile, issue 36).
    const full = new Set<string>();
    for (const job of this.ready.values()) {
      if (full.size === this.ready.domainCount) break;
      if (full.has(job.domain)) continue;
      if (!this.sites.hasRoom(job.domain)) {
        full.add(job.domain);
        continue;
      }
      // Leased ahead before its channel was deleted: it ends here, without an attempt. Asked once
      // its domain has room, so a full site's jobs cost no channel read; they end at the pass
      // that would have started them (the same pass goes on to the next job).
      if (deleted(job)) {
        this.ready.delete(job);
        gone.push(job);
        continue;
      }
      if (this.leadFull() || this.limiter.available() <= 0) break;
      this.limiter.take(1);
      this.ready.delete(job);
      this.launch(job);
    }
    this.discard(gone);
  }

  /**
   * Leased jobs of a deleted channel: removed from the store as the channel's purge removes
   * them (no attempt, no event, no bounce, no suppression), so the queue's gauges drop now.
   * A failed write leaves them leased: the purge removes them, or a recovered lease comes back
   * to a lease scan that removes it.
   */
  private discard(jobs: LeasedJob[]): void {
    if (jobs.length === 0) return;
    this.queue.discard(jobs).then(
      (removed) => this.logger.info({ jobs: removed }, 'delivery jobs of a deleted channel ended without an attempt'),
      (err) => this.logger.warn({ err }, 'delivery jobs of a deleted channel could not be removed; the purge removes them'),
    );
  }

  /**
   * Leases that outlived their attempt (it hung or failed to record) go back to due; so do, at
   * once, the leases of a cluster node that died (no heartbeat for NODE_GONE_MS), which would
   * otherwise wait out their 30 minutes (issue 32). A node declared gone that is in fact alive
   * but cut off loses nothing: its late outcomes are refused by the leases' fencing, and the
   * messages go out again from here (at-least-once).
   */
  private async recoverIfDue(now: number): Promise<void> {
    if (this.ownLeasesInDoubt) {
      this.ownLeasesInDoubt = false;
      const taken = await this.queue.recoverOwn(now, (id) => this.inFlight.has(id) || this.ready.has(id)).catch((err: unknown) => {
        this.ownLeasesInDoubt = true;
        throw err;
      });
      if (taken > 0) this.logger.warn({ recovered: taken }, 'delivery leases of this node that it no longer held (after a store error) taken back');
    }
    if (this.goneNodeCheckMs !== undefined && now - this.lastGoneCheckMs >= this.goneNodeCheckMs) {
      this.lastGoneCheckMs = now;
      const keep = (id: string) => this.inFlight.has(id) || this.ready.has(id);
      for (const node of await this.coordination.nodesGone(NODE_GONE_MS)) {
        const taken = await this.queue.recoverNode(now, node, keep);
        if (taken > 0) this.logger.warn({ node, recovered: taken }, 'delivery leases of a node that stopped beating taken back');
      }
    }
    if (now - this.lastRecoveryMs < RECOVERY_EVERY_MS) return;
    this.lastRecoveryMs = now;
    const recovered = await this.queue.recover(now, { keep: (id) => this.inFlight.has(id) || this.ready.has(id) });
    if (recovered > 0) this.logger.warn({ recovered }, 'expired delivery leases recovered');
  }

  private launch(job: LeasedJob): void {
    this.sites.acquire(job.domain);
    let holding = true;
    /** Cluster mode: the site's session counted on all nodes (cluster-sites.ts); moved to the site's key by siteRoom. */
    const shared: { hold?: SlotHold } = {};
    // The site's slot counts sessions with the destination: it is free again once the SMTP part
    // is over, while the outcome waits for its group commit (the job stays in flight and leased
    // until that commit, so a crash meanwhile retries it as before).
    const releaseSite = () => {
      if (!holding) return;
      holding = false;
      this.sites.release(job.domain);
      if (shared.hold) this.clusterSites.release(shared.hold);
      // The next job of the site, if one was leased ahead, goes now; the round leases more.
      this.startReady();
      this.kick();
    };
    const abort = new AttemptAbort();
    const deadline = setTimeout(() => abort.abort(), this.deadlineMs);
    deadline.unref();
    let failed = false;
    const siteRoom = () => this.siteRoom(job, abort, shared);
    const attempt = !this.clusterSites.shared
      ? this.runAttempt(job, abort, releaseSite, siteRoom)
      : this.holdSite(job, abort.signal()).then((hold) => {
          if (!hold) return this.queue.release(job, this.clock.now()).then(() => undefined);
          shared.hold = hold;
          return this.runAttempt(job, abort, releaseSite, siteRoom);
        });
    const done = attempt
      .catch((err) => {
        failed = true;
        this.logger.error({ err, jobId: job.id, messageId: job.messageId }, 'delivery attempt could not be recorded; the job goes back to the queue at the next round that reaches the store');
      })
      .finally(() => {
        clearTimeout(deadline);
        this.inFlight.delete(job.id);
        // Set only once the job is no longer in flight, so the recovery cannot spare it.
        if (failed) this.ownLeasesInDoubt = true;
        releaseSite();
        // The site's slot was freed (and the pump kicked) when the SMTP part ended; the end of
        // the commit frees only a place among the attempts in flight, which matters when that
        // bound the last round. Otherwise a round here would find nothing new to start, and
        // would still scan the due index and write a lease transaction (one per message).
        if (this.inFlightBound) this.kick();
      });
    this.inFlight.set(job.id, { job, abort, done });
  }

  /**
   * Cluster mode: waits until the job's site has a session free on all nodes together
   * (cluster-sites.ts); null when the wait ended by shutdown or the attempt's deadline, and the
   * job goes back to the queue without an attempt.
   */
  private holdSite(job: LeasedJob, signal: AbortSignal): Promise<SlotHold | null> {
    const key = this.sites.keyOf(job.domain);
    return this.clusterSites.hold(key, () => this.sites.limitFor(job.domain), AbortSignal.any([signal, this.siteWaits.signal]));
  }

  /**
   * Called by the attempt once its MX lookup named the site, before it connects: room at the site
   * on this node (SiteConcurrency.admit) and, in cluster mode, the attempt's hold under the site's
   * key. A hold taken under another key (the domain's name: this node's first attempt to the
   * domain since it started, before it knew the site) moves to the site's key once the site has a
   * session free on all nodes together (cluster-sites.ts moveHold); until then the attempt keeps
   * the first and does not connect, so a restarted node's first attempt never puts the site over
   * its limit. false: the attempt was called off while it waited.
   */
  private siteRoom(job: DeliveryJob, abort: AttemptAbort, shared: { hold?: SlotHold }): Promise<boolean> | undefined {
    const local = this.sites.admit(job.domain, abort);
    const hold = shared.hold;
    const key = this.sites.keyOf(job.domain);
    if (!hold || hold.key === key) return local;
    return (async () => {
      if ((await local) === false) return false;
      const waits = this.siteWaits;
      const moved = await this.clusterSites.moveHold(hold, key, () => this.sites.limitFor(job.domain), AbortSignal.any([abort.signal(), waits.signal]));
      if (moved) shared.hold = moved;
      // Ended by stop(): the attempt is aborted, so its job goes back to the queue unattempted (runAttempt).
      else if (waits.signal.aborted) abort.abort();
      return moved !== null;
    })();
  }

  private async runAttempt(job: LeasedJob, signal: AbortLike, releaseSite: () => void, siteRoom: () => Promise<boolean> | undefined): Promise<void> {
    const attempt = job.attempts + 1;
    const loaded = await this.queue.load(job);
    // Asked right before MAIL FROM is written, the start of the mail transaction (RFC 5321 3.3):
    // an attempt launched before its channel's DELETE answered, still connecting then, sends nothing.
    let calledOff = false;
    const stillWanted = () => !(calledOff ||= this.queue.channelDeleted(job));
    const result = await this.tryDelivery(job, loaded, { signal, stillWanted, siteRoom });
    releaseSite();
    if (calledOff) return this.discard([job]);
    const now = this.clock.now();
    // Made only when a line is written: pino's child() serializes its bindings at once.
    const log = () => this.logger.child({ messageId: job.messageId, recipientDomain: job.domain, mx: result.mx, attempt });
    if (this.stopping && signal.aborted && result.recipients.every((r) => r.outcome === 'deferred')) {
      await this.queue.release(job, now);
      log().info({ jobId: job.id }, 'delivery attempt interrupted by shutdown; job back in the queue');
      return;
    }
    const deferred = result.recipients.some((r) => r.outcome === 'deferred');
    const nextDueAtMs = deferred ? this.retryAt(job, loaded?.message.scheduledAt, result, attempt, now) : undefined;
    const recorded = await this.recordDurably(log, () => this.queue.record({ job, result, attemptAt: new Date(now), nextDueAtMs }));
    // A retry is due at a new time: a round now sets the wake-up timer to it.
    if (recorded.status === 'requeued') this.kick();
    if (recorded.status !== 'stale') {
      this.observer?.onAttempt({
        deliveryType: loaded?.message.deliveryType ?? 'unknown',
        delivered: recorded.delivered.length,
        // Expired recipients end as bounces (spec: expiry becomes bounced with the last reply).
        bounced: recorded.bounced.length + recorded.expired.length,
        deferred: recorded.status === 'requeued' ? recorded.deferred.length : 0,
        ageSeconds: (now - Date.parse(job.createdAt)) / 1000,
        reused: result.reused,
      });
    }
    this.logAttempt(log, job, result, recorded, nextDueAtMs);
  }

  /**
   * When a deferred job is tried again: on the retry schedule, undefined (expired: bounced) past
   * delivery.maxAgeMs of the message's age. A scheduled message's age counts from its time (one
   * sent days ahead is not old at its first attempt), and without the time the job waited for a
   * sending source (heldMs). A deferral for want of a source (poolRefused) is the operator's pool,
   * not the receiver: it is due when a source may send again (else on the schedule) and never expires.
   */
  private retryAt(job: DeliveryJob, scheduledAt: string | undefined, result: AttemptResult, attempt: number, now: number): number | undefined {
    const maxAgeMs = this.config.delivery.maxAgeMs;
    if (!result.poolRefused) {
      const sinceMs = firstDueMs(scheduledAt, Date.parse(job.createdAt)) + (job.heldMs ?? 0);
      return nextAttemptAt({ schedule: this.schedule, attempt, nowMs: now, createdAtMs: sinceMs, maxAgeMs });
    }
    const until = result.poolRefused.until;
    if (until !== undefined) return Math.max(now + POOL_RETRY_MIN_MS, until);
    return nextAttemptAt({ schedule: this.schedule, attempt, nowMs: now, createdAtMs: now, maxAgeMs }) ?? now + maxAgeMs;
  }

  /**
   * The attempt's log line: info when it did not deliver every recipient (or came too late to
   * be recorded), debug when it did; every attempt also counts in the minute's summary line.
   */
  private logAttempt(log: () => Logger, job: DeliveryJob, result: AttemptResult, recorded: RecordedOutcome, nextDueAtMs: number | undefined): void {
    const counts = { delivered: recorded.delivered.length, bounced: recorded.bounced.length, deferred: recorded.deferred.length, expired: recorded.expired.length };
    if (recorded.status !== 'stale') this.summary.add(counts, result.reused);
    const level = recorded.status === 'stale' || counts.delivered < result.recipients.length ? 'info' : 'debug';
    if (!this.logger.isLevelEnabled(level)) return;
    log()[level](
      {
        event: 'delivery_attempt',
        jobId: job.id,
        address: result.address,
        source: result.source,
        tls: result.tls,
        reused: result.reused,
        ...counts,
        smtpCode: result.smtpCode,
        enhancedCode: result.enhancedCode,
        response: result.response,
        nextAttemptAt: recorded.status === 'requeued' && nextDueAtMs !== undefined ? new Date(nextDueAtMs).toISOString() : undefined,
        stale: recorded.status === 'stale' || undefined,
      },
      'delivery attempt',
    );
  }

  /** The attempt itself; a "slow down" reply lowers its site's concurrency (or its source's there) before the pump plans again. */
  private async tryDelivery(
    job: DeliveryJob,
    loaded: LoadedMessage | undefined,
    o: { signal: AbortLike; stillWanted: () => boolean; siteRoom: () => Promise<boolean> | undefined },
  ): Promise<AttemptResult> {
    const { signal, stillWanted, siteRoom } = o;
    const startedAt = this.clock.now();
    let result: AttemptResult;
    let turn: SourceTurn | undefined;
    try {
      // A probe whose site turned out full waits for room before it connects (siteRoom).
      if (!loaded) result = missingMessage(job.recipients);
      // A sandbox message's job (one scheduled for later) never leaves the machine: its
      // simulated outcome is recorded at its time, with no DNS lookup and no connection.
      else if (loaded.message.deliveryType === 'sandbox') result = simulatedAttempt(job.recipients, loaded.message.simulatedBounces);
      else {
        const picked = await this.sources.pick(loaded.message, { domain: job.domain, site: this.sites.keyOf(job.domain) }, signal);
        if ('refusals' in picked) result = noSource(job.recipients, picked);
        // Each field named: a literal that spreads `loaded` and adds fields it lacks costs V8 new
        // hidden classes on every call (bench/RESULTS.md, issue 36).
        else result = await this.attemptFrom((turn = picked), { job, message: loaded.message, body: loaded.body, signal, stillWanted, siteRoom });
      }
    } catch (err) {
      // A bug, not the receiver's doing: retry on the schedule rather than lose the job.
      this.logger.error({ err, jobId: job.id, messageId: job.messageId }, 'delivery attempt failed unexpectedly');
      result = internalFailure(job.recipients, err);
    }
    turn?.end();
    const slow = slowsDown(result);
    // With sources, a receiver's "slow down" is an answer to that sending IP (providers limit
    // per IP): its sessions at the site are lowered, the pool's other sources keep theirs.
    if (turn?.attempt) this.sources.observe(turn, result, startedAt, slow, this.sites.keyOf(job.domain));
    else if (slow) this.sites.slowDown(job.domain, startedAt);
    return result;
  }

  /**
   * The attempt from its pool's source: bound to its address, announcing its EHLO name, paced
   * by its own pacers before the global one (source-picker.ts).
   */
  private attemptFrom(turn: SourceTurn, req: Omit<Parameters<AttemptFn>[0], 'beforeBody' | 'source'>): Promise<AttemptResult> {
    const beforeBody = () => this.sources.beforeBody(turn, this.beforeBody);
    // Object.assign, not {...req, beforeBody}: a field the spread's source lacks costs V8 new
    // hidden classes on every call (bench/RESULTS.md, issue 36).
    if (!this.sources.configured) return this.attempt(Object.assign({}, req, { beforeBody }));
    const source = turn.source;
    return this.attempt(Object.assign({}, req, { beforeBody, source })).then((result) => Object.assign({}, result, { source: source.name }));
  }

  /**
   * Waits for a pacer slot: the message reaches the receiver then, not earlier. Messages wait
   * in turn (first come, first sent) behind one timer. The pacer and its wait (a few slot
   * intervals at most, as no more start while PACE_LEAD wait) run on real time even when
   * the clock is injected: a test's fake clock schedules retries, and a message sent in a
   * session already open must not hang until that test moves its time.
   */
  private readonly beforeBody = (): Promise<void> | undefined => {
    if (this.paceQueue.length === 0 && this.pacer.take() === 0) return undefined;
    return new Promise<void>((resolve) => {
      this.paceQueue.push(resolve);
      this.pace();
    });
  };

  /** Enough attempts wait at the pacer: no more start until one of them gets its slot (pace() kicks then). */
  private leadFull(): boolean {
    return this.paceQueue.length >= PACE_LEAD;
  }

  /** Lets waiting messages go as the pacer frees slots; one timer for the next slot. */
  private pace(): void {
    while (this.paceTimer === undefined && this.paceQueue.length > 0) {
      const ms = this.pacer.take();
      if (ms === 0) {
        const wasFull = this.leadFull();
        this.paceQueue.shift()!();
        // The starts held by the lead may go on: the next attempt has PACE_LEAD slots to get here.
        if (wasFull) this.kick();
      } else
        this.paceTimer = setTimeout(() => {
          this.paceTimer = undefined;
          this.pace();
        }, ms);
    }
  }

  /** One line per change of a site's concurrency, or of one source's there (not per throttled attempt). */
  private logConcurrency(c: ConcurrencyChange, source?: string): void {
    const fields = { site: c.site, source, concurrency: c.to, was: c.from, limit: c.limit };
    if (c.reason === 'slow_down') this.logger.warn(fields, source ? "receiver asked to slow down: the source's concurrency at the site lowered" : 'receiver asked to slow down: site concurrency lowered');
    else this.logger.info(fields, source ? "the source's concurrency at the site raised after a quiet period" : 'site concurrency raised after a quiet period');
  }

  /**
   * An outcome that cannot be written for lack of space (storage_full), or while the cluster's
   * PostgreSQL cannot be reached (store_unavailable), is written again as soon as the store
   * takes writes again, instead of waiting for its lease to expire (30 minutes) and sending the
   * message a second time: the job keeps its slot and retries with backoff while the daemon
   * runs. Any other failure, or a shutdown, leaves the lease to expire as before.
   */
  private async recordDurably<T>(log: () => Logger, write: () => Promise<T>): Promise<T> {
    for (let wait = RECORD_RETRY_FIRST_MS, tries = 1; ; wait = Math.min(wait * 2, RECORD_RETRY_MAX_MS), tries++) {
      try {
        return await write();
      } catch (err) {
        if (!isAppError(err) || (err.code !== 'storage_full' && err.code !== 'store_unavailable') || this.stopping) throw err;
        if (tries === 1) log().warn({ code: err.code }, 'the store refused a delivery outcome; retrying until it takes writes again');
        await new Promise<void>((resolve) => this.clock.setTimer(resolve, wait));
      }
    }
  }
}

/** The soonest a job deferred for want of a source comes back, whatever its refusals say. */
const POOL_RETRY_MIN_MS = 1000;

/** First and longest wait between tries to record an outcome while the disk is full. */
const RECORD_RETRY_FIRST_MS = 250;
const RECORD_RETRY_MAX_MS = 10_000;

/** A job whose message or body is gone (should not happen): end it visibly, never silently. */
function missingMessage(recipients: readonly string[]): AttemptResult {
  const response = 'message or body missing from the store';
  return {
    recipients: recipients.map((recipient) => ({ recipient, outcome: 'bounced', bounceType: 'soft', category: 'other', phase: 'message', response })),
    tls: false,
    response,
  };
}

/** Every source of the message's pool is out of it for now: deferred until one may send again (retryAt). */
function noSource(recipients: readonly string[], why: NoSource): AttemptResult {
  const response = noSourceText(why);
  const untils = why.refusals.flatMap((r) => (r.refusal.until === undefined ? [] : [r.refusal.until]));
  // Known only when every refusal says until when: the earliest of them.
  const until = untils.length > 0 && untils.length === why.refusals.length ? Math.min(...untils) : undefined;
  return {
    recipients: recipients.map((recipient) => ({ recipient, outcome: 'deferred', category: 'other', phase: 'connect', response })),
    tls: false,
    response,
    poolRefused: until === undefined ? {} : { until },
  };
}

function internalFailure(recipients: readonly string[], err: unknown): AttemptResult {
  const response = `internal error: ${err instanceof Error ? err.message : String(err)}`;
  return {
    recipients: recipients.map((recipient) => ({ recipient, outcome: 'deferred', category: 'other', phase: 'connect', response })),
    tls: false,
    response,
  };
}
