/**
 * The LMDB engine: the store port (store/port/index.ts) over one LMDB environment (env.ts).
 * Each aggregate's verbs live in repos/; they call the functions of this folder, which keep
 * LMDB's group commit (Store.write) and their synchronous hot loops inside the engine, so a verb
 * costs its caller a microtask. Only the composition roots (daemon.ts, the CLI) and the engine's
 * own tests construct it; everything else sees StorePort.
 */
import { backfillChannelBroadcasts } from './broadcasts.js';
import { Store, type StoreOptions } from './env.js';
import { indexEnabledRoutes } from './inbound-routes.js';
import { indexPendingSignatures } from './signing.js';
import type { StorePort } from '../port/index.js';
import { LmdbAccounts } from './repos/accounts.js';
import { LmdbApiKeys } from './repos/api-keys.js';
import { LmdbBroadcasts } from './repos/broadcasts.js';
import { LmdbChannels } from './repos/channels.js';
import { LmdbDnsFailures } from './repos/dns-failures.js';
import { LmdbDomains } from './repos/domains.js';
import { LmdbEngagement } from './repos/engagement.js';
import { LmdbEvents } from './repos/events.js';
import { LmdbIdempotency } from './repos/idempotency.js';
import { LmdbMessages } from './repos/messages.js';
import { LmdbMeta } from './repos/meta.js';
import { LmdbMtaSts } from './repos/mta-sts.js';
import { LmdbQueue } from './repos/queue.js';
import { LmdbRetention } from './repos/retention.js';
import { LmdbSessions } from './repos/sessions.js';
import { LmdbStatistics } from './repos/stats.js';
import { buildRollup } from './stats-rollup-build.js';
import { LmdbSuppressions } from './repos/suppressions.js';
import { LmdbTlsRpt } from './repos/tls-rpt.js';
import { LmdbWebhookOutbox } from './repos/webhook-outbox.js';
import { LmdbWebhooks } from './repos/webhooks.js';
import { LmdbInboundMessages } from './repos/inbound-messages.js';
import { LmdbInboundRoutes } from './repos/inbound-routes.js';
import { LmdbTemplates } from './repos/templates.js';

/** What upgradeData touched: records added to an index or rolled up, per upgrade. */
export interface DataUpgrades {
  broadcastsIndexed: number;
  messagesIndexed: number;
  statsRolledUp: number;
  /** Enabled inbound routes added to their domain's index (postmaster@, RFC 5321 4.5.1). */
  routesIndexed: number;
}

export class LmdbStore extends Store implements StorePort {
  readonly accounts = new LmdbAccounts(this);
  readonly apiKeys = new LmdbApiKeys(this);
  readonly sessions = new LmdbSessions(this);
  readonly meta = new LmdbMeta(this);
  readonly channels = new LmdbChannels(this);
  readonly domains = new LmdbDomains(this);
  readonly messages = new LmdbMessages(this);
  readonly queue = new LmdbQueue(this);
  readonly broadcasts = new LmdbBroadcasts(this);
  readonly events = new LmdbEvents(this);
  readonly stats = new LmdbStatistics(this);
  readonly suppressions = new LmdbSuppressions(this);
  readonly engagement = new LmdbEngagement(this);
  readonly webhooks = new LmdbWebhooks(this);
  readonly inboundRoutes = new LmdbInboundRoutes(this);
  readonly templates = new LmdbTemplates(this);
  readonly inboundMessages = new LmdbInboundMessages(this);
  readonly webhookOutbox = new LmdbWebhookOutbox(this);
  readonly idempotency = new LmdbIdempotency(this);
  readonly tlsRpt = new LmdbTlsRpt(this);
  readonly mtaSts = new LmdbMtaSts(this);
  readonly dnsFailures = new LmdbDnsFailures(this);
  readonly retention = new LmdbRetention(this);

  constructor(opts: StoreOptions) {
    super(opts);
  }

  /**
   * The engine's own data upgrades, once per data folder and resumable (each keeps a flag in
   * meta): index entries that older versions did not write. `postrider serve` runs them after
   * start, before anything reads those indexes; returns how many records each one touched.
   */
  async upgradeData(progress: { statsRolledUp?: (records: number) => void } = {}): Promise<DataUpgrades> {
    const broadcastsIndexed = await backfillChannelBroadcasts(this);
    const messagesIndexed = await indexPendingSignatures(this);
    const statsRolledUp = await buildRollup(this, progress.statsRolledUp);
    const routesIndexed = await indexEnabledRoutes(this);
    return { broadcastsIndexed, messagesIndexed, statsRolledUp, routesIndexed };
  }
}
