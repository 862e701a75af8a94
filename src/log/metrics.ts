/**
 * Prometheus metrics (GET /metrics). One Metrics object per daemon owns its own prom-client
 * Registry: nothing goes to prom-client's global default registry, so two daemons in one process
 * (tests) never share or clash.
 *
 * Counters and histograms are fed by the code that sees the event (`record*`, `observe*`);
 * gauges are read from the sources the daemon provides, once per scrape, in render().
 * Every postrider metric is named postrider_*; the process and Node.js metrics keep their
 * standard names (process_cpu_seconds_total, nodejs_heap_size_used_bytes, ...) so stock
 * dashboards work.
 */
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/** The delivery queue at one moment. */
export interface QueueSnapshot {
  /** Jobs waiting for their due time or for a delivery slot. */
  queued: number;
  /** Jobs an attempt is working on now. */
  leased: number;
  /** Queued jobs whose due time has passed (the backlog). */
  dueNow: number;
  /** How long the earliest due job has been due; 0 when nothing is overdue. */
  oldestDueAgeSeconds: number;
}

/** A source's value, or a Promise of it when it is a store read (asynchronous through the store port). */
type Read<T> = () => T | Promise<T>;

/** A warming sending source at one moment (delivery/warmup-gate.ts): its plan's day and, per provider, today's count and cap. */
export interface WarmupSnapshot {
  source: string;
  /** Day of the plan, 1-based (0 before its start). */
  day: number;
  /** Per provider id of the provider table (sites outside it are too many for labels); cap null once its curve ended. */
  providers: { provider: string; sentToday: number; capToday: number | null }[];
}

/** Read once per scrape, concurrently; each may be left out (its gauges then stay at 0). */
export interface MetricsSources {
  queue?: Read<QueueSnapshot>;
  /** WorkerPool.stats(). */
  pool?: () => { threads: number; queued: number; utilization: number };
  /** Store.sizeBytes(). */
  storeSizeBytes?: () => number;
  /** Messages committed and waiting for their DKIM signature (their jobs are not due yet). */
  awaitingSignature?: Read<number>;
  /** Seconds the oldest of those has waited since its commit; 0 when none waits. */
  oldestAwaitingSignature?: Read<number>;
  /** Sources with a warm-up plan (none: the warm-up gauges are absent). */
  warmup?: Read<WarmupSnapshot[]>;
  /** Each configured sending source and whether it is in its pools (delivery/source-health.ts). */
  sourceAvailability?: Read<{ source: string; available: boolean }[]>;
  /** Closed series buckets this node's statistics cache holds (statistics/series-cache.ts). */
  statisticsCacheBuckets?: () => number;
}

export interface MetricsOptions {
  sources?: MetricsSources;
  /** process_* and nodejs_* metrics; default true. */
  processMetrics?: boolean;
  /** A source that throws keeps its gauges at the last value and is reported here. */
  onCollectError?: (err: unknown, source: keyof MetricsSources) => void;
}

export interface HttpObservation {
  method: string;
  /** The route pattern ("/channels/:id"), never the raw URL: labels must stay few. */
  route: string;
  status: number;
  seconds: number;
}

const HTTP_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
/** From acceptance to the recipient's server answering 250: seconds to days (retries). */
const LATENCY_BUCKETS = [0.5, 1, 5, 15, 60, 300, 900, 3600, 4 * 3600, 86_400, 3 * 86_400];
const SIGN_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1];

export class Metrics {
  readonly registry = new Registry();
  private readonly sources: MetricsSources;
  private readonly onCollectError: NonNullable<MetricsOptions['onCollectError']>;

  private readonly httpRequests: Counter<'method' | 'route' | 'status'>;
  private readonly httpDuration: Histogram<'method' | 'route' | 'status'>;
  private readonly outcomes: Record<'accepted' | 'delivered' | 'deferred' | 'bounced', Counter<'delivery_type'>>;
  private readonly deliveryLatency: Histogram<'delivery_type'>;
  private readonly dkimSign: Histogram<string>;
  private readonly connections: Counter<'reused'>;
  private readonly unmatchedReports: Counter<'kind'>;
  private readonly queueDepth: Gauge<'state'>;
  private readonly queueDue: Gauge<string>;
  private readonly queueOldestDue: Gauge<string>;
  private readonly poolUtilization: Gauge<string>;
  private readonly poolThreads: Gauge<string>;
  private readonly poolQueued: Gauge<string>;
  private readonly storeSize: Gauge<string>;
  private readonly awaitingSignature: Gauge<string>;
  private readonly oldestAwaitingSignature: Gauge<string>;
  private readonly warmupDay: Gauge<'source'>;
  private readonly warmupSent: Gauge<'source' | 'provider'>;
  private readonly warmupCap: Gauge<'source' | 'provider'>;
  private readonly sourceAvailable: Gauge<'source'>;
  private readonly seriesPoints: Counter<'from'>;
  private readonly statisticsCacheBuckets: Gauge;

  constructor(opts: MetricsOptions = {}) {
    this.sources = opts.sources ?? {};
    this.onCollectError = opts.onCollectError ?? (() => {});
    const registers = [this.registry];
    const counter = <L extends string>(name: string, help: string, labelNames: readonly L[]) =>
      new Counter<L>({ name: `postrider_${name}`, help, labelNames, registers });
    const gauge = <L extends string>(name: string, help: string, labelNames: readonly L[] = []) =>
      new Gauge<L>({ name: `postrider_${name}`, help, labelNames, registers });
    const histogram = <L extends string>(name: string, help: string, buckets: number[], labelNames: readonly L[] = []) =>
      new Histogram<L>({ name: `postrider_${name}`, help, buckets, labelNames, registers });

    this.httpRequests = counter('http_requests_total', 'HTTP requests answered, by route pattern and status.', ['method', 'route', 'status']);
    this.httpDuration = histogram('http_request_duration_seconds', 'Time from receiving an HTTP request to sending its response.', HTTP_BUCKETS, [
      'method',
      'route',
      'status',
    ]);
    const perRecipient = '(one per recipient), by the channel delivery type.';
    this.outcomes = {
      accepted: counter('messages_accepted_total', `Messages accepted from the API or SMTP and committed ${perRecipient}`, ['delivery_type']),
      delivered: counter('messages_delivered_total', `Messages the recipient's server accepted ${perRecipient}`, ['delivery_type']),
      deferred: counter('messages_deferred_total', `Delivery attempts that failed temporarily and will be retried ${perRecipient}`, ['delivery_type']),
      bounced: counter('messages_bounced_total', `Messages given up on ${perRecipient}`, ['delivery_type']),
    };
    this.deliveryLatency = histogram('delivery_latency_seconds', 'Time from acceptance to delivery, retries included.', LATENCY_BUCKETS, [
      'delivery_type',
    ]);
    this.dkimSign = histogram('dkim_sign_duration_seconds', 'Time to DKIM-sign one message on a worker thread (after its commit; the wait for a thread not counted).', SIGN_BUCKETS);
    this.connections = counter('delivery_connections_total', 'SMTP sessions delivery attempts ran on: reused from the connection cache or newly opened.', ['reused']);
    this.unmatchedReports = counter(
      'inbound_reports_unmatched_total',
      'Reports received by the inbound listener that matched no message or no recipient of it (kind arf: RFC 5965 feedback, dsn: RFC 3464); each is logged with its keys.',
      ['kind'],
    );
    this.queueDepth = gauge('queue_depth', 'Delivery jobs not finished: queued (waiting) or leased (being attempted).', ['state']);
    this.queueDue = gauge('queue_due', 'Queued delivery jobs whose due time has passed.');
    this.queueOldestDue = gauge('queue_oldest_due_age_seconds', 'How long the earliest due delivery job has been waiting past its due time.');
    this.poolUtilization = gauge('worker_pool_utilization_ratio', 'Share of time the worker threads were busy (0..1).');
    this.poolThreads = gauge('worker_pool_threads', 'Worker threads running.');
    this.poolQueued = gauge('worker_pool_queued_tasks', 'Tasks waiting for a free worker thread.');
    this.storeSize = gauge('store_size_bytes', 'Size of the LMDB data file.');
    this.awaitingSignature = gauge('messages_awaiting_signature', 'Messages committed and waiting for their DKIM signature; their delivery jobs become due once signed.');
    // The finishing stage refuses nothing when it falls behind (its backlog is on disk): the wait shows here.
    this.oldestAwaitingSignature = gauge('messages_awaiting_signature_oldest_age_seconds', 'How long the oldest message waiting to be composed and DKIM-signed has waited since its commit; 0 when none waits.');

    this.warmupDay = gauge('source_warmup_day', 'Day of its warm-up plan a sending source is on (0 before its start); past the last capped day it is warm.', ['source']);
    this.warmupSent = gauge('source_warmup_sent_today', 'Messages a warming sending source carried to a provider today (UTC), cluster-wide.', ['source', 'provider']);
    this.warmupCap = gauge('source_warmup_cap_today', "A warming sending source's cap of messages to a provider today (absent once that provider's curve ended).", ['source', 'provider']);
    this.sourceAvailable = gauge('source_available', 'Whether a sending source (delivery.sources) is in its pools (1) or taken out for failing on this node (0).', ['source']);

    this.seriesPoints = counter(
      'statistics_series_points_total',
      "Points of statistics series answered: from this node's cache of closed buckets (from=cache) or read from the store (from=store).",
      ['from'],
    );
    this.statisticsCacheBuckets = gauge('statistics_cache_buckets', "Closed series buckets held by this node's statistics cache (statistics.cacheBuckets at most).");

    if (opts.processMetrics ?? true) collectDefaultMetrics({ register: this.registry });
  }

  get contentType(): string {
    return this.registry.contentType;
  }

  observeHttpRequest(o: HttpObservation): void {
    const labels = { method: o.method, route: o.route, status: String(o.status) };
    this.httpRequests.inc(labels);
    this.httpDuration.observe(labels, o.seconds);
  }

  recordAccepted(deliveryType: string, recipients = 1): void {
    this.outcomes.accepted.inc({ delivery_type: deliveryType }, recipients);
  }

  /** latencySeconds: from acceptance to this delivery, when known. */
  recordDelivered(deliveryType: string, latencySeconds?: number): void {
    this.outcomes.delivered.inc({ delivery_type: deliveryType });
    if (latencySeconds !== undefined && latencySeconds >= 0) this.deliveryLatency.observe({ delivery_type: deliveryType }, latencySeconds);
  }

  recordDeferred(deliveryType: string, recipients = 1): void {
    this.outcomes.deferred.inc({ delivery_type: deliveryType }, recipients);
  }

  recordBounced(deliveryType: string, recipients = 1): void {
    this.outcomes.bounced.inc({ delivery_type: deliveryType }, recipients);
  }

  /** reused: the attempt's session came from the connection cache (delivery/connection-cache.ts). */
  recordConnection(reused: boolean): void {
    this.connections.inc({ reused: String(reused) });
  }

  /** An inbound report (feedback or DSN) that matched nothing (inbound/processor.ts). */
  recordUnmatchedReport(kind: 'arf' | 'dsn'): void {
    this.unmatchedReports.inc({ kind });
  }

  /** One statistics series read (statistics/series-cache.ts): its points from the cache and from the store. */
  recordSeriesPoints(fromCache: number, fromStore: number): void {
    if (fromCache > 0) this.seriesPoints.inc({ from: 'cache' }, fromCache);
    if (fromStore > 0) this.seriesPoints.inc({ from: 'store' }, fromStore);
  }

  observeDkimSign(seconds: number): void {
    this.dkimSign.observe(seconds);
  }

  /** Runs a build-and-sign task and records its duration, whether it succeeds or not. */
  async timeDkimSign<T>(task: () => Promise<T>): Promise<T> {
    const start = process.hrtime.bigint();
    try {
      return await task();
    } finally {
      this.observeDkimSign(Number(process.hrtime.bigint() - start) / 1e9);
    }
  }

  /** The exposition text; reads the gauges' sources first. */
  async render(): Promise<string> {
    await this.refreshGauges();
    return this.registry.metrics();
  }

  private async refreshGauges(): Promise<void> {
    const { queue, pool, storeSizeBytes, awaitingSignature, oldestAwaitingSignature, warmup, sourceAvailability, statisticsCacheBuckets } = this.sources;
    await Promise.all([
      this.read('queue', queue, (q) => {
        this.queueDepth.set({ state: 'queued' }, q.queued);
        this.queueDepth.set({ state: 'leased' }, q.leased);
        this.queueDue.set(q.dueNow);
        this.queueOldestDue.set(q.oldestDueAgeSeconds);
      }),
      this.read('pool', pool, (p) => {
        this.poolUtilization.set(p.utilization);
        this.poolThreads.set(p.threads);
        this.poolQueued.set(p.queued);
      }),
      this.read('storeSizeBytes', storeSizeBytes, (bytes) => this.storeSize.set(bytes)),
      this.read('awaitingSignature', awaitingSignature, (n) => this.awaitingSignature.set(n)),
      this.read('oldestAwaitingSignature', oldestAwaitingSignature, (s) => this.oldestAwaitingSignature.set(s)),
      this.read('warmup', warmup, (w) => this.setWarmup(w)),
      this.read('sourceAvailability', sourceAvailability, (list) => {
        for (const s of list) this.sourceAvailable.set({ source: s.source }, s.available ? 1 : 0);
      }),
      this.read('statisticsCacheBuckets', statisticsCacheBuckets, (n) => this.statisticsCacheBuckets.set(n)),
    ]);
  }

  /** Replaces the warm-up gauges: a source or provider no longer capped drops out. */
  private setWarmup(snapshots: readonly WarmupSnapshot[]): void {
    for (const g of [this.warmupDay, this.warmupSent, this.warmupCap]) g.reset();
    for (const w of snapshots) {
      this.warmupDay.set({ source: w.source }, w.day);
      for (const p of w.providers) {
        this.warmupSent.set({ source: w.source, provider: p.provider }, p.sentToday);
        if (p.capToday !== null) this.warmupCap.set({ source: w.source, provider: p.provider }, p.capToday);
      }
    }
  }

  /** Never rejects: a source that fails keeps its gauges at their last value and is reported. */
  private async read<T>(name: keyof MetricsSources, source: Read<T> | undefined, apply: (value: T) => void): Promise<void> {
    if (!source) return;
    try {
      apply(await source());
    } catch (err) {
      this.onCollectError(err, name);
    }
  }
}
