/**
 * The store port: everything postrider keeps, as asynchronous verbs per aggregate. Services,
 * the pipeline and the observers see this interface and nothing else of the store; an engine
 * implements it (store/lmdb/engine.ts today; cluster mode adds PostgreSQL beside it).
 *
 * The rules every verb follows, so that a second engine can implement it without touching its
 * callers:
 *
 * - Verbs take and return plain data (records of domain/types.ts and the types declared beside
 *   each port). No transaction, database handle or closure that runs inside a write crosses the
 *   port: what must commit together is one verb, and what a caller used to add inside a write is
 *   passed to that verb as data.
 * - A check-then-write rule (a per-account limit, a unique name, the send quota, an
 *   idempotency key) is one verb that is atomic in every engine: insert-if-absent, or a
 *   conditional update that fails with the rule's AppError. Never a read followed by a write.
 * - A verb resolves once what it wrote is durable (committed and synced); a read sees every
 *   write whose verb has resolved.
 * - Predicates a verb takes (the delivery planner's `accept`) are synchronous, pure and cheap:
 *   an engine may call them any number of times, in any order, and ignore their answer for a
 *   candidate it does not return.
 * - Every verb is asynchronous but three: healthy() and sizeBytes() below, which GET /ready and
 *   the metrics read from a cheap local view, and QueuePort.channelDeleted, the dispatcher's last
 *   check before MAIL FROM, which must answer in the same turn as that write (an engine shared
 *   by nodes keeps a local set of deleted channels, filled by its own deletions and by the other
 *   nodes' notifications).
 *
 * The engine-specific parts (LMDB's data folder, backup, integrity check) are not in the port:
 * the CLI reaches them through the engine itself.
 */
import type { AccountsPort, ApiKeysPort, DashboardSessionsPort } from './accounts.js';
import type { BroadcastsPort } from './broadcasts.js';
import type { ChannelsPort } from './channels.js';
import type { DnsFailuresPort, MtaStsPort, TlsRptPort } from './delivery-state.js';
import type { DomainsPort } from './domains.js';
import type { EngagementPort } from './engagement.js';
import type { EventsPort, StatisticsPort } from './events.js';
import type { IdempotencyPort } from './idempotency.js';
import type { InboundMessagesPort } from './inbound-messages.js';
import type { InboundRoutesPort } from './inbound-routes.js';
import type { TemplatesPort } from './templates.js';
import type { MessagesPort } from './messages.js';
import type { MetaPort } from './meta.js';
import type { QueuePort } from './queue.js';
import type { RetentionPort } from './retention.js';
import type { SuppressionsPort } from './suppressions.js';
import type { WebhookOutboxPort, WebhooksPort } from './webhooks.js';

export interface StorePort {
  readonly accounts: AccountsPort;
  readonly apiKeys: ApiKeysPort;
  readonly sessions: DashboardSessionsPort;
  readonly meta: MetaPort;
  readonly channels: ChannelsPort;
  readonly domains: DomainsPort;
  readonly messages: MessagesPort;
  readonly queue: QueuePort;
  readonly broadcasts: BroadcastsPort;
  readonly events: EventsPort;
  readonly stats: StatisticsPort;
  readonly suppressions: SuppressionsPort;
  readonly engagement: EngagementPort;
  readonly webhooks: WebhooksPort;
  readonly webhookOutbox: WebhookOutboxPort;
  readonly idempotency: IdempotencyPort;
  readonly inboundRoutes: InboundRoutesPort;
  readonly templates: TemplatesPort;
  readonly inboundMessages: InboundMessagesPort;
  readonly tlsRpt: TlsRptPort;
  readonly mtaSts: MtaStsPort;
  readonly dnsFailures: DnsFailuresPort;
  readonly retention: RetentionPort;

  /** Opens the store (a Component: daemon.ts starts it first and stops it last). */
  start(): Promise<void>;
  /** Refuses new writes, lets the ones in flight finish, closes. */
  stop(): Promise<void>;
  /** A cheap real read, for GET /ready: false when the store is closed or unreadable. */
  healthy(): boolean;
  /** Bytes the store takes on disk, for the metrics (0 when the engine cannot tell). */
  sizeBytes(): number;
}

export type {
  AccountsPort,
  ApiKeysPort,
  BroadcastsPort,
  ChannelsPort,
  DashboardSessionsPort,
  DnsFailuresPort,
  DomainsPort,
  EngagementPort,
  EventsPort,
  IdempotencyPort,
  InboundMessagesPort,
  InboundRoutesPort,
  TemplatesPort,
  MessagesPort,
  MetaPort,
  MtaStsPort,
  QueuePort,
  RetentionPort,
  StatisticsPort,
  SuppressionsPort,
  TlsRptPort,
  WebhookOutboxPort,
  WebhooksPort,
};
