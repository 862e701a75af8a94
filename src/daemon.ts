/**
 * The daemon: composes the components in dependency order and stops them in reverse. Knows
 * nothing about signals or argv (cli/serve.ts owns those), so tests run it in-process.
 */
import { SourceHealthGate } from './delivery/source-health.js';
import { SourceReport } from './delivery/source-report.js';
import { isPool, resolveSendingIps, type SendingIps } from './domain/sending-ips.js';
import type { SourceGate } from './delivery/source-gates.js';
import { ShapingGate } from './delivery/shaping-gate.js';
import { compileShapingRules } from './domain/shaping-match.js';
import { systemClock } from './queue/clock.js';
import { WarmupGate } from './delivery/warmup-gate.js';
import { warmupSnapshots } from './delivery/warmup-metrics.js';
import fs from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Config } from './config/schema.js';
import { bootstrapIfEmpty, type InitialCredentials } from './bootstrap.js';
import { LocalCoordination } from './coordination/local.js';
import { loadNodeId } from './coordination/node-id.js';
import { PostgresCoordination } from './coordination/postgres/index.js';
import { NODE_GONE_MS, type Coordination } from './coordination/port.js';
import { createDaneLookup } from './dane/index.js';
import { DeliveryService } from './delivery/dispatcher.js';
import { DnsResolver } from './dns/resolver.js';
import { DomainRecheck } from './domains/recheck.js';
import { DomainService } from './domains/service.js';
import { activityRoutes } from './http/routes/activity.js';
import { messageScheduleRoutes } from './http/routes/message-schedule.js';
import { MessageSchedule } from './activity/schedule.js';
import { broadcastRoutes } from './http/routes/broadcasts.js';
import { channelRoutes } from './http/routes/channels.js';
import { apiKeyRoutes } from './http/routes/api-keys.js';
import { ApiKeyService } from './api-keys/account-keys.js';
import { domainRoutes } from './http/routes/domains.js';
import { sendRoutes } from './http/routes/send.js';
import { suppressionRoutes } from './http/routes/suppressions.js';
import { statisticsRoutes } from './http/routes/statistics.js';
import { StatisticsQueries } from './statistics/queries.js';
import { SeriesCache } from './statistics/series-cache.js';
import { trackingRoutes } from './http/routes/tracking.js';
import { opsRoutes } from './http/routes/ops.js';
import { opsShapingRoutes } from './http/routes/ops-shaping.js';
import { queueRoutes } from './http/routes/queue.js';
import { webhookRoutes } from './http/routes/webhooks.js';
import { inboundMessageRoutes } from './http/routes/inbound-messages.js';
import { inboundRouteRoutes } from './http/routes/inbound-routes.js';
import { dashboardRoutes } from './http/routes/dashboard.js';
import { dashboardMessageHtmlRoutes } from './http/routes/dashboard-message-html.js';
import { dashboardTemplateHtmlRoutes } from './http/routes/dashboard-template-html.js';
import { dashboardTemplateDraftHtmlRoutes } from './http/routes/dashboard-template-draft-html.js';
import { dashboardSessionRoutes } from './http/routes/dashboard-session.js';
import { dashboardSettingsRoutes } from './http/routes/dashboard-settings.js';
import { HttpServer, type RouteModule } from './http/server.js';
import type { Logger } from './log/logger.js';
import { Metrics } from './log/metrics.js';
import { oncePerWindow } from './log/repeats.js';
import { PublicUrl } from './domain/public-url.js';
import { readQueueSnapshot } from './ops/queue-snapshot.js';
import { AccountQueue } from './queue/account-queue.js';
import { RetentionSweeper, retentionWindow } from './retention/sweeper.js';
import { ChannelPurger } from './channels/purger.js';
import { ChannelService } from './channels/service.js';
import { SmtpListener } from './smtp/server.js';
import { TlsRptService } from './tls-rpt/service.js';
import { InboundListener } from './inbound/listener.js';
import { InboundProcessor } from './inbound/processor.js';
import { InboundPoster } from './inbound/poster.js';
import { InboundReception } from './inbound/reception.js';
import { MtaStsPolicies } from './mta-sts/cache.js';
import { awaitsFinishing } from './store/port/messages.js';
import type { StorePort } from './store/port/index.js';
import { requestDeadlineMs, storeEngineFor, type StoreEngine } from './compose/store-engine.js';
import { PoolMessageBuilder } from './submission/builder.js';
import { PortDomainRegistry } from './submission/domain-registry.js';
import { Submission } from './submission/submission.js';
import { WorkerPool } from './workers/pool.js';
import { WebhookDispatcher } from './webhooks/dispatcher.js';
import { WebhookService } from './webhooks/service.js';
import { InboundMessageService } from './inbound/messages.js';
import { InboundRouteService } from './inbound/routes.js';
import { TemplateService } from './templates/service.js';
import { templateRoutes } from './http/routes/templates.js';
import { WebhookTargets } from './webhooks/targets.js';

/** Cluster mode: how often delivery and the inbound poster look for nodes that stopped beating (Coordination.nodesGone). */
const GONE_NODE_CHECK_MS = 10_000;

/** Anything with a lifecycle. Started in order, stopped in reverse. */
export interface Component {
  start(): Promise<void>;
  stop(): Promise<void>;
}

export interface DaemonOptions {
  /**
   * The node's coordination (coordination/port.ts). Default: the single-node one, under the
   * data folder's node id (LocalCoordination.forDataDir), as one LMDB data folder is one node.
   */
  coordination?: Coordination;
}

/**
 * Lease owners this node's previous runs wrote before the data folder had a node id: every
 * queue lease said 'local'. One node per LMDB folder, so they are this node's to take back at
 * start (delivery's formerNodeIds), not another node's to wait for.
 */
const LMDB_FORMER_NODE_IDS = ['local'];

/** At most one "cluster coordination statement failed" line per this many ms (log/repeats.ts). */
const COORDINATION_WARNING_WINDOW_MS = 10_000;

/**
 * The composition root. Its parts, along DESIGN's diagram:
 *
 *   ingress (http/, smtp/, inbound/) → pipeline (submission/, workers/, domains/)
 *     → delivery (queue/, delivery/) → observers (webhooks/, retention/, purges, re-checks)
 *
 * on the foundation every part reads: the store, the coordination (wake-ups, the node id,
 * leadership of the background jobs, shared rates; coordination/port.ts), the public URL and
 * the metrics registry.
 *
 * A part can only be given what exists, and the ingress is given the pipeline, so the
 * constructor and start() go along the flow from the pipeline on and open the ingress last: no
 * listener accepts a message before everything behind it runs. stop() goes in reverse, stage by
 * stage (see start()): delivery, observers and ingress together, then the pipeline, the store
 * last. Each component receives exactly its slice of Config.
 */
export class Daemon {
  // Foundation
  /** The store engine (compose/store-engine.ts): LMDB in dataDir, or PostgreSQL in cluster mode. */
  readonly engine: StoreEngine;
  readonly store: StorePort;
  /** What the node shares with the others of a cluster; on LMDB, this process alone (local.ts). */
  readonly coordination: Coordination;
  /** config.publicUrl, or derived from the port the HTTP API bound (domain/public-url.ts). */
  readonly publicUrl: PublicUrl;

  /** Where the web dashboard answers: under publicUrl (the address a person opens). */
  get dashboardUrl(): string {
    return `${this.publicUrl.value}/dashboard`;
  }
  readonly metrics: Metrics;
  // Pipeline
  /** Uncached: verification must see the zone as it is now (delivery wants its own, cached). */
  readonly domainDns: DnsResolver;
  readonly domains: DomainService;
  readonly pool: WorkerPool;
  readonly submission: Submission;
  // Delivery
  /** The sources and pools of sending IPs (issue 35, delivery.sources/pools/defaultPools). */
  readonly sendingIps: SendingIps;
  /** What may take a sending source out of its pool per site (delivery/source-gates.ts), in the order they are asked. */
  private readonly sourceGates: readonly SourceGate[];
  /** Automatic shaping (delivery/shaping-gate.ts): one of the gates, and what DELETE /ops/sources/{source}/shaping/{site} lifts. */
  readonly shaping: ShapingGate;
  /** GET /ops/sources and the reverse DNS check of the sources at start. */
  readonly sourceReport: SourceReport;
  /** Takes a failing source out of its pools (delivery/source-health.ts); none without delivery.sources. */
  readonly sourceHealth: SourceHealthGate | undefined;
  /** Cached (TTL-bounded): delivery resolves the same MX hosts over and over. */
  readonly deliveryDns: DnsResolver;
  readonly delivery: DeliveryService;
  /** Recipient domains' MTA-STS policies (RFC 8461), cached in the store. */
  readonly mtaSts: MtaStsPolicies;
  /** TLS-RPT (RFC 8460): delivery records TLS results here (recordTlsResult); daily reports to the recipient domains. */
  readonly tlsRpt: TlsRptService;
  // Observers and background work
  readonly webhookTargets: WebhookTargets;
  readonly webhooks: WebhookDispatcher;
  readonly retention: RetentionSweeper;
  /** Removes the data of deleted channels after the 204 (store/channel-purge.ts). */
  readonly channelPurger: ChannelPurger;
  readonly domainRecheck: DomainRecheck;
  /** The sums of closed statistics series buckets this node keeps (statistics.cacheBuckets). */
  readonly seriesCache: SeriesCache;
  // Ingress
  readonly http: HttpServer;
  readonly smtp: SmtpListener | null;
  /** Mail for inbound routes, and bounces, feedback reports and unsubscribe mails for the return-path hosts (inbound.enabled). */
  readonly inbound: InboundListener | null;
  /** Processes received routed mail after its 250: verified, parsed, POSTed signed to its route (inbound.enabled). */
  readonly inboundPoster: InboundPoster | null;
  initialCredentials: InitialCredentials | null = null;
  /** Started components, grouped in stages (see start()). */
  private stages: Component[][] = [[]];

  constructor(
    readonly config: Config,
    readonly logger: Logger,
    options: DaemonOptions = {},
  ) {
    // The node's id lives in its data folder (coordination/node-id.ts), whatever the engine.
    const nodeId = loadNodeId(config.dataDir);
    this.engine = storeEngineFor(config, {
      applicationName: `postrider ${nodeId}`,
      onMigration: (version, name) => logger.info({ version, name }, 'PostgreSQL schema migration applied'),
      onMaintenanceError: (err) => logger.warn({ err }, 'event log partition maintenance failed; retried in a minute'),
    });
    this.store = this.engine.store;
    this.coordination = options.coordination ?? this.buildCoordination(nodeId);
    // LMDB's outbox writer signals in this process; the coordination carries it to the webhook
    // dispatcher. PostgreSQL notifies 'outbox' from the committing transaction itself
    // (domain/wake-channel.ts), which reaches every node's dispatcher.
    if (this.engine.kind === 'lmdb') this.engine.store.outbox.subscribe(() => this.coordination.wake('outbox'));
    this.publicUrl = new PublicUrl({ configured: config.publicUrl, http: config.http, hostname: config.hostname, boundPort: () => this.http.port });
    this.metrics = this.buildMetrics();
    this.seriesCache = new SeriesCache({ maxBuckets: config.statistics.cacheBuckets, onRead: (cached, read) => this.metrics.recordSeriesPoints(cached, read) });

    this.domainDns = new DnsResolver({ servers: config.dns.servers, timeoutMs: config.dns.timeoutMs, cacheMaxEntries: 0 });
    this.domains = this.buildDomains();
    this.pool = new WorkerPool({ threads: config.workers.threads || undefined, onError: (err) => logger.error({ err }, 'worker thread failed') });
    this.submission = this.buildSubmission();

    this.sendingIps = resolveSendingIps(config.delivery, config.hostname);
    this.deliveryDns = new DnsResolver({ servers: config.dns.servers, timeoutMs: config.dns.timeoutMs });
    this.sourceHealth = this.sendingIps.configured ? new SourceHealthGate({ sources: [...this.sendingIps.sources.values()], logger: logger.child({ component: 'delivery' }) }) : undefined;
    this.shaping = new ShapingGate({ coordination: this.coordination, rules: compileShapingRules(config.delivery.shaping), logger: logger.child({ component: 'shaping' }), clock: systemClock() });
    this.sourceGates = this.buildSourceGates();
    this.sourceReport = new SourceReport({ ips: this.sendingIps, dns: this.deliveryDns, gates: this.sourceGates });
    this.mtaSts = new MtaStsPolicies({ store: this.store, resolver: this.deliveryDns, config: config.delivery.mtaSts, allowPrivate: config.delivery.allowPrivate, logger: logger.child({ component: 'mta-sts' }) });
    // Reports to mailto: addresses go through the one submission path (tls-rpt/mailer.ts).
    this.tlsRpt = new TlsRptService({
      store: this.store,
      resolver: this.deliveryDns,
      config: config.tlsRpt,
      hostname: config.hostname,
      submission: this.submission,
      coordination: this.coordination,
      logger: logger.child({ component: 'tls-rpt' }),
    });
    this.delivery = this.buildDelivery();

    this.webhookTargets = this.buildWebhookTargets();
    const coordination = this.coordination;
    this.webhooks = new WebhookDispatcher({ store: this.store, coordination, config: pick(config, 'webhooks', 'shutdown'), targets: this.webhookTargets, logger });
    this.retention = new RetentionSweeper({ store: this.store, coordination, ...retentionWindow(config), logger: logger.child({ component: 'retention' }) });
    this.channelPurger = new ChannelPurger({ store: this.store, coordination, logger: logger.child({ component: 'channel-purge' }) });
    this.domainRecheck = new DomainRecheck({ store: this.store, coordination, domains: this.domains, intervalMs: config.domains.recheckIntervalMs, logger: logger.child({ component: 'domains' }) });

    this.http = this.buildHttp();
    this.smtp = config.smtp.enabled
      ? new SmtpListener({ config: pick(config, 'smtp', 'hostname', 'dataDir', 'shutdown'), submission: this.submission, coordination, logger: logger.child({ component: 'smtp' }), requestDeadlineMs: requestDeadlineMs(config) })
      : null;
    this.inboundPoster = config.inbound.enabled ? this.buildInboundPoster(logger.child({ component: 'inbound' })) : null;
    this.inbound = config.inbound.enabled ? this.buildInbound(logger.child({ component: 'inbound' })) : null;
  }

  // ---------- building ----------

  private buildInboundPoster(logger: Logger): InboundPoster {
    return new InboundPoster({
      store: this.store,
      config: pick(this.config, 'inbound', 'webhooks', 'shutdown'),
      nodeId: this.coordination.nodeId,
      targets: this.webhookTargets,
      resolver: this.deliveryDns,
      attachmentUrlPrefix: (id) => `${this.publicUrl.value}/inbound/messages/${id}/attachments/`,
      pool: this.pool,
      logger,
      ...(this.engine.kind === 'postgres' && { goneNodes: { list: () => this.coordination.nodesGone(NODE_GONE_MS), everyMs: GONE_NODE_CHECK_MS } }),
    });
  }

  /** The inbound listener over its reception: routed mail committed for processing, the bounce hosts' mail to the report processor. */
  private buildInbound(logger: Logger): InboundListener {
    const { config } = this;
    const bounces = new InboundProcessor({ store: this.store, returnPathLabel: config.domains.returnPathLabel, metrics: this.metrics, logger });
    const poster = this.inboundPoster;
    const reception = new InboundReception({ store: this.store, bounces, committed: () => poster?.notify() });
    return new InboundListener({ config: pick(config, 'inbound', 'smtp', 'hostname', 'dataDir', 'shutdown'), reception, logger, requestDeadlineMs: requestDeadlineMs(config) });
  }

  private buildMetrics(): Metrics {
    return new Metrics({
      sources: {
        queue: () => readQueueSnapshot(this.store, Date.now()),
        pool: () => this.pool.stats(),
        storeSizeBytes: () => this.store.sizeBytes(),
        awaitingSignature: () => this.store.messages.unfinishedCount(),
        oldestAwaitingSignature: async () => (await this.store.messages.oldestUnfinishedMs(Date.now())) / 1000,
        warmup: () => warmupSnapshots(this.sourceGates, Date.now()),
        sourceAvailability: () => this.sourceHealth?.availability() ?? [],
        statisticsCacheBuckets: () => this.seriesCache.buckets,
      },
      onCollectError: (err, source) => this.logger.warn({ err, source }, 'metrics source failed'),
    });
  }

  private buildDomains(): DomainService {
    const c = this.config;
    return new DomainService({
      store: this.store,
      dns: this.domainDns,
      settings: {
        hostname: c.domains.mxHost || c.hostname,
        returnPathLabel: c.domains.returnPathLabel,
        trackingLabel: c.domains.trackingLabel,
        unsubscribeLabel: c.domains.unsubscribeLabel,
        publicUrl: this.publicUrl,
        dmarcReportAddress: c.domains.dmarcReportAddress,
        defaultAlgorithm: c.domains.dkimAlgorithm,
        maxPerAccount: c.limits.domainsPerAccount,
      },
      logger: this.logger.child({ component: 'domains' }),
    });
  }

  /** Committed messages go to delivery at once (the 'queue' wake-up) and into the metrics. */
  private buildSubmission(): Submission {
    const metrics = this.metrics;
    return new Submission({
      store: this.store,
      config: pick(this.config, 'policy', 'limits', 'smtp', 'inbound', 'domains'),
      builder: new PoolMessageBuilder(this.pool, (seconds) => metrics.observeDkimSign(seconds)),
      domains: new PortDomainRegistry(this.store),
      publicUrl: this.publicUrl,
      onQueued: (messages) => {
        for (const m of messages) metrics.recordAccepted(m.record.deliveryType, m.record.recipients.length);
        // Messages to compose or sign have no due jobs yet: onReady tells delivery once they are finished.
        if (messages.some((m) => !awaitsFinishing(m))) this.coordination.wake('queue');
      },
      // Messages signed after their commit (submission/finishing.ts): their jobs are due now.
      onReady: () => this.coordination.wake('queue'),
      coordination: this.coordination,
      logger: this.logger,
    });
  }

  /** The gates of the sending sources (issue 35); started and stopped by delivery. */
  private buildSourceGates(): SourceGate[] {
    const warmup = new WarmupGate({
      ips: this.sendingIps,
      coordination: this.coordination,
      dns: this.deliveryDns,
      onError: (err, a) => this.logger.warn({ err, source: a.source, site: a.site }, 'warm-up: the counters did not answer; the source carries no mail to the site until they do'),
    });
    // Health last: its reserve() takes a failing source's one probe, best taken once the others agreed.
    return [...(warmup.active ? [warmup] : []), this.shaping, ...(this.sourceHealth ? [this.sourceHealth] : [])];
  }

  private buildDelivery(): DeliveryService {
    const { delivery, hostname, domains, shutdown } = this.config;
    const metrics = this.metrics;
    return new DeliveryService({
      store: this.store,
      coordination: this.coordination,
      nodeId: this.coordination.nodeId,
      formerNodeIds: this.engine.kind === 'lmdb' ? LMDB_FORMER_NODE_IDS : [],
      // Cluster mode: a dead node's leases come back within NODE_GONE_MS plus this (issue 32: 60 s).
      goneNodeCheckMs: this.engine.kind === 'postgres' ? GONE_NODE_CHECK_MS : undefined,
      // Cluster mode: a site's sessions are counted on all nodes together (delivery/cluster-sites.ts).
      siteSlots: this.engine.kind === 'postgres' ? this.coordination.slots('mx-site') : undefined,
      config: { delivery, hostname, domains: { returnPathLabel: domains.returnPathLabel }, shutdown: { graceMs: shutdown.graceMs } },
      resolver: this.deliveryDns,
      logger: this.logger,
      sourceGates: this.sourceGates,
      mtaSts: this.mtaSts,
      tlsRpt: this.tlsRpt,
      // RFC 7672 needs a validating resolver: without one the AD bit means nothing and DANE is off.
      dane: this.config.dns.dnssecValidating ? createDaneLookup(this.config.dns) : undefined,
      observer: {
        onAttempt: (o) => {
          for (let i = 0; i < o.delivered; i++) metrics.recordDelivered(o.deliveryType, o.ageSeconds);
          if (o.deferred > 0) metrics.recordDeferred(o.deliveryType, o.deferred);
          if (o.bounced > 0) metrics.recordBounced(o.deliveryType, o.bounced);
          if (o.reused !== undefined) metrics.recordConnection(o.reused);
        },
      },
    });
  }

  /** Webhook targets resolve through the configured DNS servers when there are any. */
  private buildWebhookTargets(): WebhookTargets {
    const c = this.config;
    return new WebhookTargets({
      allowHttp: c.webhooks.allowHttp,
      allowPrivate: c.webhooks.allowPrivate,
      resolver: c.dns.servers.length > 0 ? this.deliveryDns : undefined,
    });
  }

  private buildHttp(): HttpServer {
    const templates = new TemplateService({ store: this.store, limits: this.config.templates, render: (input) => this.pool.render(input) });
    const routes: RouteModule[] = [
      opsRoutes({ readiness: () => this.readiness(), metrics: this.metrics, sources: this.sourceReport, defaultPools: this.sendingIps.defaultPools }),
      opsShapingRoutes(this.shaping),
      apiKeyRoutes(new ApiKeyService({ store: this.store, maxPerAccount: this.config.limits.apiKeysPerAccount })),
      channelRoutes(new ChannelService({ store: this.store, coordination: this.coordination, maxPerAccount: this.config.limits.channelsPerAccount, isPool: (name) => isPool(this.sendingIps, name) })),
      domainRoutes(this.domains),
      sendRoutes(this.submission),
      broadcastRoutes,
      suppressionRoutes,
      activityRoutes,
      messageScheduleRoutes(
        new MessageSchedule({ store: this.store, maxScheduleDays: this.config.limits.maxScheduleDays, onDue: () => this.coordination.wake('queue') }),
      ),
      statisticsRoutes(new StatisticsQueries({ store: this.store, cache: this.seriesCache })),
      webhookRoutes(new WebhookService({ store: this.store, targets: this.webhookTargets, maxPerAccount: this.config.webhooks.maxPerAccount, timeoutMs: this.config.webhooks.timeoutMs })),
      inboundRouteRoutes(new InboundRouteService({ store: this.store, targets: this.webhookTargets, maxPerAccount: this.config.inbound.maxRoutesPerAccount })),
      templateRoutes(templates),
      inboundMessageRoutes(new InboundMessageService({ store: this.store, attachmentAt: (input) => this.pool.inboundAttachment(input), onDue: () => this.inboundPoster?.notify() })),
      queueRoutes(new AccountQueue({ store: this.store, siteOf: (domain) => this.delivery.siteOf(domain), onDue: () => this.coordination.wake('queue') })),
      trackingRoutes,
      dashboardSessionRoutes,
      dashboardMessageHtmlRoutes,
      dashboardTemplateHtmlRoutes(templates),
      dashboardTemplateDraftHtmlRoutes(templates, this.config.templates.maxBytes),
      dashboardSettingsRoutes({
        smtp: this.config.smtp,
        boundSmtp: () => (this.smtp?.listening ? { port: this.smtp.port, implicitTlsPort: this.smtp.implicitTlsPort } : null),
      }),
      // The Vite build (npm run build): dist/dashboard, from src/ (tests) and from dist/ alike.
      dashboardRoutes(fileURLToPath(new URL('../dist/dashboard/', import.meta.url))),
    ];
    const config = pick(this.config, 'hostname', 'publicUrl', 'http', 'api', 'shutdown', 'metrics', 'limits');
    return new HttpServer({ config, store: this.store, coordination: this.coordination, logger: this.logger, publicUrl: this.publicUrl, requestDeadlineMs: requestDeadlineMs(this.config) }, routes);
  }

  /**
   * One node (LMDB): the coordination is this process's memory. Cluster mode: PostgreSQL, beside
   * the store's tables, so that wake-ups, leadership, leases and the shared limits hold for all
   * nodes together (coordination/postgres/).
   */
  private buildCoordination(nodeId: string): Coordination {
    const onListenerError = (err: unknown, topic: string) => this.logger.error({ err, topic }, 'wake-up listener failed');
    if (this.engine.kind === 'lmdb') return new LocalCoordination({ nodeId, onListenerError });
    const { postgresUrl: url, postgresSchema: schema } = this.config.store;
    const failed = oncePerWindow(COORDINATION_WARNING_WINDOW_MS);
    const onError = (err: unknown) => failed((leftOut) => this.logger.warn({ err, leftOut: leftOut || undefined }, 'cluster coordination statement failed'));
    return new PostgresCoordination({ url, schema, nodeId, onListenerError, onError });
  }

  /** GET /ready: the store, the workers and every listener. */
  private readiness(): Record<string, boolean> {
    const r: Record<string, boolean> = {
      store: this.store.healthy(),
      workers: this.pool.stats().threads > 0,
      http: this.http.listening,
    };
    if (this.smtp) r.smtp = this.smtp.listening;
    if (this.inbound) r.inbound = this.inbound.listening;
    return r;
  }

  // ---------- running ----------

  async start(): Promise<void> {
    fs.mkdirSync(this.config.dataDir, { recursive: true, mode: 0o700 });
    try {
      // Stage 1, the store and the pipeline everything else hands work to: stopped last.
      await this.startFoundation();
      await this.startComponent(resolverComponent(this.domainDns));
      await this.startComponent(this.pool);
      // Its own stage, stopped before the pool and the store: its finishing stage composes and
      // signs what waits before a graceful stop ends (submission/finishing.ts).
      this.beginStage();
      await this.startComponent(this.submission);
      await this.startComponent(resolverComponent(this.deliveryDns));
      await this.startComponent(this.mtaSts);
      // Stage 1, so it stops after delivery and its last flush has delivery's last results.
      await this.startComponent(this.tlsRpt);
      // Stage 2, delivery, observers, background work and ingress: stopped together, at once, on
      // shutdown, so that no listener keeps accepting while another one drains (each finishes its
      // own in-flight work within shutdown.graceMs), before the pipeline of stage 1 goes away.
      this.beginStage();
      await this.startComponent(this.delivery);
      // Not awaited: a slow resolver must not hold the start; one warn line per mismatch.
      if (this.sendingIps.configured) {
        this.sourceReport.warnMismatches(this.logger.child({ component: 'delivery' })).catch((err: unknown) => this.logger.warn({ err }, 'sending sources: reverse DNS check failed'));
      }
      await this.startComponent(this.webhooks);
      if (this.inboundPoster) await this.startComponent(this.inboundPoster);
      await this.startComponent(this.retention);
      await this.startComponent(this.channelPurger);
      await this.startComponent(this.domainRecheck);
      await this.startComponent(this.http);
      if (this.smtp) await this.startComponent(this.smtp);
      if (this.inbound) await this.startComponent(this.inbound);
    } catch (err) {
      await this.stop();
      throw err;
    }
    this.logger.info({ http: `${this.config.http.host}:${this.http.port}`, smtp: this.smtp?.port, dashboard: this.dashboardUrl }, 'postrider started');
    // The hostname names us in EHLO (RFC 5321 4.1.1.1 wants a fully qualified domain name) and is
    // the target of the MX and CNAME records users are told to publish; a short name breaks both.
    if (!this.config.hostname.includes('.')) {
      this.logger.warn({ hostname: this.config.hostname }, 'hostname is not a fully qualified domain name; set hostname (POSTRIDER_HOSTNAME) to the name receivers and DNS records should use');
    }
  }

  /** The store, then what a first start puts in it: the initial account and key, the tracking secret, the age index of older waiting entries. */
  private async startFoundation(): Promise<void> {
    await this.startComponent(this.store);
    if (isComponent(this.coordination)) await this.startComponent(this.coordination);
    this.initialCredentials = await this.bootstrapOnce();
    await this.store.meta.ensureTrackingSecret();
    if (this.engine.kind !== 'lmdb') return;
    // The statistics rollup of an older data folder, once (store/lmdb/stats-rollup-build.ts).
    const statsRolledUp = (records: number) => this.logger.info({ records }, 'older statistics counters rolled up into hours and days');
    const { broadcastsIndexed, messagesIndexed, routesIndexed } = await this.engine.store.upgradeData({ statsRolledUp });
    if (broadcastsIndexed > 0) this.logger.info({ broadcasts: broadcastsIndexed }, 'older broadcasts added to the channel index');
    if (messagesIndexed > 0) this.logger.info({ messages: messagesIndexed }, 'messages waiting to be finished added to the age index');
    if (routesIndexed > 0) this.logger.info({ routes: routesIndexed }, 'older inbound routes added to the domain index');
  }

  /**
   * The first start's account and key, made by one node only: several nodes starting at once on
   * an empty cluster store would otherwise each see it empty and each make one (a check then a
   * write). The others wait for the lease, then find the store bootstrapped. One process on LMDB
   * always gets the lease at once.
   */
  private async bootstrapOnce(): Promise<InitialCredentials | null> {
    for (;;) {
      const lease = await this.coordination.lead('bootstrap', 60_000);
      if (lease) {
        try {
          return await bootstrapIfEmpty(this.store, this.config.dataDir);
        } finally {
          await lease.release();
        }
      }
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }

  /** SIGHUP: reload what can change without a restart (TLS certificates, log level). */
  async reload(opts: { logLevel?: string } = {}): Promise<void> {
    if (opts.logLevel) this.logger.level = opts.logLevel;
    if (this.smtp) await this.smtp.reloadTls();
  }

  /** Stages in reverse order of start; the components of one stage stop concurrently. */
  async stop(): Promise<void> {
    const stages = this.stages.reverse();
    this.stages = [[]];
    for (const stage of stages) {
      await Promise.all(
        stage.reverse().map((c) =>
          c.stop().catch((err: unknown) => this.logger.error({ err }, 'component failed to stop cleanly')),
        ),
      );
    }
  }

  private beginStage(): void {
    this.stages.push([]);
  }

  private async startComponent(c: Component): Promise<void> {
    await c.start();
    this.stages[this.stages.length - 1].push(c);
  }
}

/** The keys of Config a component reads: it is given those and nothing else. */
function pick<K extends keyof Config>(config: Config, ...keys: K[]): Pick<Config, K> {
  const slice = {} as Pick<Config, K>;
  for (const k of keys) slice[k] = config[k];
  return slice;
}

function isComponent(x: object): x is Component {
  return typeof (x as Partial<Component>).start === 'function' && typeof (x as Partial<Component>).stop === 'function';
}

/** A DnsResolver's synchronous start and stop as a Component. */
function resolverComponent(dns: DnsResolver): Component {
  return { start: async () => dns.start(), stop: async () => dns.stop() };
}
