/**
 * The PostgreSQL engine: the store port (store/port/index.ts) over one PostgreSQL database, for
 * cluster mode (issue 32): every node keeps all its state there, so nodes are interchangeable.
 * Each aggregate's verbs live in repos/; the schema and its migrations in schema/ and
 * migrations.ts. Only the composition roots (daemon.ts, the CLI) and the engine's own tests
 * construct it; everything else sees StorePort.
 */
import { openClient, type Sql } from './client.js';
import { channelDeletedTopic, loadDeletedChannels } from './channels-tx.js';
import { PgContext } from './context.js';
import { guarded } from './unavailable.js';
import { ensurePartitionsAhead, PARTITION_SIZING, type PartitionSizing } from './event-partitions.js';
import { latestVersion, migrate, SchemaTooNew, schemaVersion, type MigrationReport } from './migrations.js';
import type { StorePort } from '../port/index.js';
import { StoreProblem } from '../port/problems.js';
import { pgAccounts } from './repos/accounts.js';
import { pgApiKeys } from './repos/api-keys.js';
import { pgBroadcasts } from './repos/broadcasts.js';
import { pgChannels } from './repos/channels.js';
import { pgDnsFailures } from './repos/dns-failures.js';
import { pgDomains } from './repos/domains.js';
import { pgEngagement } from './repos/engagement.js';
import { pgEvents } from './repos/events.js';
import { pgIdempotency } from './repos/idempotency.js';
import { pgInboundMessages } from './repos/inbound-messages.js';
import { pgInboundRoutes } from './repos/inbound-routes.js';
import { pgTemplates } from './repos/templates.js';
import { pgMessages } from './repos/messages.js';
import { pgMeta } from './repos/meta.js';
import { pgMtaSts } from './repos/mta-sts.js';
import { pgQueue } from './repos/queue.js';
import { pgRetention } from './repos/retention.js';
import { pgSessions } from './repos/sessions.js';
import { pgStatistics } from './repos/stats.js';
import { pgSuppressions } from './repos/suppressions.js';
import { pgTlsRpt } from './repos/tls-rpt.js';
import { pgWebhookOutbox } from './repos/webhook-outbox.js';
import { pgWebhooks } from './repos/webhooks.js';

export interface PostgresStoreOptions {
  /** postgres://user:password@host:port/database (store.postgresUrl). */
  url: string;
  /** The schema postrider's tables live in. Default "postrider". */
  schema?: string;
  /** Connections in this node's pool. Default 10. */
  poolSize?: number;
  /** Milliseconds any statement may run; 0: no limit. Default 30,000. */
  statementTimeoutMs?: number;
  /** Shown in pg_stat_activity: which node a connection is. */
  applicationName?: string;
  /** Called for each migration applied at start. */
  onMigration?: (version: number, name: string) => void;
  /** Refuse (StoreProblem no_store) a database without postrider's schema instead of creating it (CLI commands). */
  mustExist?: boolean;
  /** The event log's partitions (event-partitions.ts): sizes (tests use small ones), and how often they are maintained. */
  partitions?: Partial<PartitionSizing> & { everyMs?: number };
  /** A partition maintenance run failed (retried at the next run; never fatal). */
  onMaintenanceError?: (err: unknown) => void;
}

/** How often healthy() and sizeBytes() are refreshed by a real query. */
const PROBE_MS = 2_000;
/**
 * A probe without an answer this long makes healthy() false: a server that hangs, or a network
 * that drops packets, leaves the query waiting, with no error, for as long as TCP keeps trying.
 */
export const PROBE_TIMEOUT_MS = 5_000;
/** How often the event log's next partition is made sure of (it is due half a day ahead). */
const PARTITIONS_MS = 60_000;

export class PostgresStore implements StorePort {
  private readonly ctx: PgContext;
  private sqlPool: Sql;
  /** True once stop() ended the pool: a start() after it opens a new one (GET /ready's reopen). */
  private poolEnded = false;
  private probeTimer: NodeJS.Timeout | null = null;
  private partitionTimer: NodeJS.Timeout | null = null;
  private partitioning: Promise<void> | null = null;
  private up = false;
  private bytes = 0;
  private lastMigration: MigrationReport | null = null;
  private deletionListener: { unlisten(): Promise<void> } | null = null;

  readonly accounts;
  readonly apiKeys;
  readonly sessions;
  readonly meta;
  readonly channels;
  readonly domains;
  readonly messages;
  readonly queue;
  readonly broadcasts;
  readonly events;
  readonly stats;
  readonly suppressions;
  readonly engagement;
  readonly webhooks;
  readonly webhookOutbox;
  readonly idempotency;
  readonly inboundRoutes;
  readonly templates;
  readonly inboundMessages;
  readonly tlsRpt;
  readonly mtaSts;
  readonly dnsFailures;
  readonly retention;

  constructor(private readonly opts: PostgresStoreOptions) {
    const schema = opts.schema ?? 'postrider';
    this.sqlPool = this.openPool();
    const ctx = (this.ctx = new PgContext(this.sqlPool, schema));
    this.accounts = guarded(pgAccounts(ctx));
    this.apiKeys = guarded(pgApiKeys(ctx));
    this.sessions = guarded(pgSessions(ctx));
    this.meta = guarded(pgMeta(ctx));
    this.channels = guarded(pgChannels(ctx));
    this.domains = guarded(pgDomains(ctx));
    this.messages = guarded(pgMessages(ctx));
    this.queue = guarded(pgQueue(ctx));
    this.broadcasts = guarded(pgBroadcasts(ctx));
    this.events = guarded(pgEvents(ctx));
    this.stats = guarded(pgStatistics(ctx));
    this.suppressions = guarded(pgSuppressions(ctx));
    this.engagement = guarded(pgEngagement(ctx));
    this.webhooks = guarded(pgWebhooks(ctx));
    this.webhookOutbox = guarded(pgWebhookOutbox(ctx));
    this.idempotency = guarded(pgIdempotency(ctx));
    this.inboundRoutes = guarded(pgInboundRoutes(ctx));
    this.templates = guarded(pgTemplates(ctx));
    this.inboundMessages = guarded(pgInboundMessages(ctx));
    this.tlsRpt = guarded(pgTlsRpt(ctx));
    this.mtaSts = guarded(pgMtaSts(ctx));
    this.dnsFailures = guarded(pgDnsFailures(ctx));
    this.retention = guarded(pgRetention(ctx));
  }

  private openPool(): Sql {
    const o = this.opts;
    return openClient({
      url: o.url,
      schema: o.schema ?? 'postrider',
      poolSize: o.poolSize ?? 10,
      statementTimeoutMs: o.statementTimeoutMs ?? 30_000,
      applicationName: o.applicationName ?? 'postrider',
    });
  }

  /** Connects, applies the migrations this database lacks (under the advisory lock), starts the health probe and the partition maintenance. */
  async start(): Promise<void> {
    if (this.poolEnded) {
      this.sqlPool = this.openPool();
      this.ctx.usePool(this.sqlPool);
      this.poolEnded = false;
    }
    try {
      if (this.opts.mustExist && (await schemaVersion(this.sqlPool, this.ctx.schema)) === 0) {
        throw new StoreProblem('no_store', `${this.where()} holds no postrider store: start postrider serve (or run postrider migrate) with this store.postgresUrl first`);
      }
      this.lastMigration = await migrate(this.sqlPool, this.ctx.schema, (m) => this.opts.onMigration?.(m.version, m.name));
    } catch (err) {
      this.poolEnded = true;
      await this.sqlPool.end({ timeout: 1 }).catch(() => undefined);
      throw this.startProblem(err);
    }
    await this.followChannelDeletions();
    await this.probe();
    this.probeTimer = setInterval(() => void this.probe(), PROBE_MS);
    this.probeTimer.unref();
    await this.maintainPartitions();
    this.partitionTimer = setInterval(() => void this.maintainPartitions(), this.opts.partitions?.everyMs ?? PARTITIONS_MS);
    this.partitionTimer.unref();
  }

  /** The event log's next partitions (event-partitions.ts); one run at a time, a failure reported and left to the next. */
  maintainPartitions(): Promise<void> {
    this.partitioning ??= ensurePartitionsAhead(this.sqlPool, { ...PARTITION_SIZING, ...this.opts.partitions })
      .then(() => undefined, (err: unknown) => this.opts.onMaintenanceError?.(err))
      .finally(() => (this.partitioning = null));
    return this.partitioning;
  }

  /** Lets the queries in flight finish (up to 5 s), then closes the pool. */
  async stop(): Promise<void> {
    if (this.probeTimer) clearInterval(this.probeTimer);
    this.probeTimer = null;
    if (this.partitionTimer) clearInterval(this.partitionTimer);
    this.partitionTimer = null;
    await this.partitioning;
    this.up = false;
    await this.deletionListener?.unlisten().catch(() => undefined);
    this.deletionListener = null;
    this.poolEnded = true;
    await this.sqlPool.end({ timeout: 5 });
  }

  healthy(): boolean {
    return this.up;
  }

  sizeBytes(): number {
    return this.bytes;
  }

  /** What start() applied (for the log): undefined before start. */
  migrations(): MigrationReport | undefined {
    return this.lastMigration ?? undefined;
  }

  /** "schema S of postgres://user:***@host/db", for the operator's messages. */
  private where(): string {
    let url = '(unparsable URL)';
    try {
      const u = new URL(this.opts.url);
      if (u.password !== '') u.password = '***';
      url = u.toString();
    } catch {
      // keep the placeholder: the URL itself may hold the password
    }
    return `schema ${this.ctx.schema} of ${url}`;
  }

  /** What start() failed on, as the one-line operator problem when it is one (main.ts prints it). */
  private startProblem(err: unknown): unknown {
    if (err instanceof StoreProblem) return err;
    if (err instanceof SchemaTooNew) return new StoreProblem('store_too_new', `${this.where()}: ${err.message}`);
    const code = typeof err === 'object' && err !== null && 'code' in err ? String((err as { code: unknown }).code) : '';
    // Network errors, postgres.js' CONNECT_TIMEOUT, 28P01/28000 login refused, 3D000 no such database.
    if (/^(ECONNREFUSED|ENOTFOUND|EAI_AGAIN|ETIMEDOUT|EHOSTUNREACH|ECONNRESET|CONNECT_TIMEOUT|CONNECTION_.*|28P01|28000|3D000)$/.test(code)) {
      return new StoreProblem('store_unreachable', `cannot use PostgreSQL, ${this.where()}: ${(err as Error).message} (${code}); check store.postgresUrl and that the database is up`);
    }
    return err;
  }

  /**
   * QueuePort.channelDeleted answers synchronously from ctx.deletedChannels (store/port/index.ts):
   * this node's deletions add to it after their commit, the other nodes' arrive as a NOTIFY
   * (ChannelsPort.delete sends it in its transaction). The tombstones are read again at every
   * (re)connect of the LISTEN connection, since a notification sent while it was down is lost.
   */
  private async followChannelDeletions(): Promise<void> {
    const reload = async (): Promise<void> => {
      for (const id of await loadDeletedChannels(this.sqlPool)) this.ctx.deletedChannels.add(id);
    };
    await reload();
    this.deletionListener = await this.sqlPool.listen(
      channelDeletedTopic(this.ctx.schema),
      (channelId) => this.ctx.deletedChannels.add(channelId),
      () => void reload().catch(() => undefined),
    );
  }

  private async probe(): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const unanswered = new Promise<never>((_resolve, reject) => {
      timer = setTimeout(() => reject(new Error('no answer')), PROBE_TIMEOUT_MS);
      timer.unref();
    });
    try {
      const query = this.sqlPool<{ bytes: number }[]>`
        SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0)::int8 AS bytes
        FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
        WHERE n.nspname = ${this.ctx.schema} AND c.relkind IN ('r', 'p')`;
      const [row] = await Promise.race([query, unanswered]);
      this.bytes = row?.bytes ?? 0;
      this.up = true;
    } catch {
      this.up = false;
    } finally {
      clearTimeout(timer);
    }
  }
}

/** The engine's shared context, for its own tests and fixtures (test/support/pg-*.ts) only. */
export function pgContextOf(store: PostgresStore): PgContext {
  return store['ctx'];
}

/** The database's schema version and the newest this postrider knows, changing nothing (postrider migrate --status). */
export async function postgresSchemaStatus(o: PostgresStoreOptions): Promise<{ current: number; latest: number }> {
  const schema = o.schema ?? 'postrider';
  const sql = openClient({ url: o.url, schema, poolSize: 1, statementTimeoutMs: o.statementTimeoutMs ?? 30_000, applicationName: o.applicationName ?? 'postrider' });
  try {
    return { current: await schemaVersion(sql, schema), latest: latestVersion() };
  } finally {
    await sql.end({ timeout: 5 });
  }
}
