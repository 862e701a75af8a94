/**
 * A whole store as plain records, for `postrider store copy-to-postgres` (issue 32): one engine
 * exports what it keeps as these records (store/lmdb/export/), the other imports them
 * (store/postgres/import/), and the CLI joins the two. Neither engine imports the other, so this
 * shape is all they share: records of domain/ and of the port, and a few small ones declared
 * here for what only an engine's keys held (a session's id, a job's lease generation).
 *
 * What is NOT a record: the indexes each engine keeps beside its records (LMDB's by-account,
 * by-due-time and by-message keys; PostgreSQL's indexes and event_terms rows), which the
 * importing engine builds again from the records, and what is only true while a daemon runs
 * (leases, idempotency claims, webhook claims): the copy runs with the daemon stopped.
 */
import type { StatCounters } from '../../domain/stat-counters.js';
import type { PolicyCounts } from '../../domain/tls-rpt.js';
import type { Account, ApiKey, DeliveryJob, EventRecord, MailType, MessageRecord, SuppressionRecord } from '../../domain/types.js';
import type { SendingDomain } from '../../domain/sending-domain.js';
import type { OutboxEntry, Webhook, WebhookStatus } from '../../domain/webhook.js';
import type { InboundMessage } from '../../domain/inbound-message.js';
import type { InboundRoute } from '../../domain/inbound-route.js';
import type { StoredTemplate, TemplateVersion } from '../../domain/template.js';
import type { DashboardSession } from './accounts.js';
import type { BroadcastFailure, BroadcastRecord } from './broadcasts.js';
import type { StoredChannel } from './channels.js';
import type { CachedStsPolicy, TlsRptReport } from './delivery-state.js';
import type { IdempotencyRecord } from './idempotency.js';
import type { FinishingTries } from './messages.js';

/** The records of each kind, in the order a copy writes them. */
export interface TransferRecords {
  accounts: Account;
  apiKeys: ApiKey;
  /** id: the SHA-256 of the session's token (the token itself is never stored). */
  dashboardSessions: { id: string; session: DashboardSession };
  /** The first-start marks: bootstrappedAt (ISO string) and initialKeyPending (true). */
  meta: { key: 'bootstrappedAt' | 'initialKeyPending'; value: string | boolean };
  /** Secrets the daemon made itself (the tracking HMAC key). */
  secrets: { name: string; value: Uint8Array };
  /** Tombstones (deletedAt) included: domains still show a deleted channel. */
  channels: StoredChannel;
  /** Deleted channels whose data is still to be purged. */
  channelPurges: { channelId: string; accountId: string; deletedAtMs: number };
  domains: SendingDomain;
  dkimKeys: { domainId: string; selector: string; privateKeyPem: string };
  /** The record as the port returns it (no engine key such as LMDB's acceptedSeq). */
  messages: MessageRecord;
  messageBodies: { messageId: string; accountId: string; channelId: string; body: Uint8Array };
  /** Messages waiting for the finishing stage (composition, DKIM signature). */
  unfinishedMessages: UnfinishedEntry;
  clientMessageIds: { accountId: string; clientId: string; messageId: string; channelId: string };
  /** A pending account's recipients counted so far. */
  sendQuota: { accountId: string; used: number };
  jobs: TransferJob;
  /** The record with its finished/canceled counts and, when any event was counted, its statistics. */
  broadcasts: { record: BroadcastRecord; finished: number; canceled: number; statistics?: StatCounters };
  /** Entries not expanded yet. */
  broadcastEntries: { broadcastId: string; index: number; accountId: string; channelId: string; entry: unknown };
  broadcastFailures: { broadcastId: string; accountId: string; channelId: string; failure: BroadcastFailure };
  broadcastSuppressions: { broadcastId: string; email: string; accountId: string; channelId: string };
  /** With their seqs: API cursors (after=) stay valid. */
  events: EventRecord;
  /** [clockMs, seq] wherever an event raised the event clock (the running maximum of timestamps). */
  eventClock: { clockMs: number; seq: number };
  /** Messages still queued, by the seq of their accepted event. */
  messageQueue: { accountId: string; acceptedSeq: number; messageId: string; channelId: string };
  statCounters: TransferStatCounter;
  suppressions: SuppressionRecord;
  /** A bounce report or complaint recorded for a message and recipient (lower case): never recorded twice. */
  engagementMarks: { messageId: string; eventType: 'bounced' | 'complained'; recipient: string; accountId: string; channelId: string; atMs: number };
  webhooks: { webhook: Webhook; signingKey: string; status: WebhookStatus };
  /** head: the oldest entry of its (webhook, message), the only one that may be sent. */
  webhookOutbox: { entry: OutboxEntry; accountId: string; channelId: string; head: boolean };
  /** Inbound routes (issue 33) with their signing keys. */
  inboundRoutes: { route: InboundRoute; signingKey: string };
  /** Stored templates (issue 34) and each of their versions. */
  templates: { template: StoredTemplate };
  templateVersions: { templateId: string; version: TemplateVersion };
  /** Received messages (issue 33) with the number of their latest claim and their raw bytes (empty when gone). */
  inboundMessages: { message: InboundMessage; lease: number; raw: Uint8Array };
  /** Received messages counted per account, UTC day and channel (statistics; they outlive the messages). */
  inboundDailyCounts: { accountId: string; day: number; channelId: string; received: number };
  idempotency: { accountId: string; key: string; record: IdempotencyRecord };
  tlsRptCounts: PolicyCounts;
  tlsRptReports: { day: string; policyDomain: string; report: TlsRptReport };
  mtaStsPolicies: { domain: string; policy: CachedStsPolicy };
  dnsFailures: { accountId: string; domain: string; times: number[] };
  /** Messages whose accepted event retention removed while their delivery went on. */
  retentionPending: { messageId: string; accountId: string; channelId: string; createdMs: number };
  /** Last: the highest seq given out, the event clock and the lowest seq retention kept. */
  eventLog: { lastSeq: number; clockMs: number | null; floor: number };
}

export type TransferKind = keyof TransferRecords;

/** One batch of records of one kind: the discriminated union the copy streams. */
export type TransferBatch = { [K in TransferKind]: { kind: K; records: TransferRecords[K][] } }[TransferKind];

export interface UnfinishedEntry {
  messageId: string;
  accountId: string;
  channelId: string;
  committedMs: number;
  /** The d= domain that signs it; absent: sent unsigned. */
  domain?: string;
  /** The request to compose from, as the submission gave it; absent: the committed body is the message. */
  compose?: unknown;
  failures?: FinishingTries;
}

/**
 * A delivery job. `held`: queued but not due, its message waits for the finishing stage. A job
 * that was leased is copied queued and due at the copy's time (no lease outlives the daemon that
 * held it); leaseGeneration stays with it, so a later lease fences as before.
 */
export interface TransferJob {
  job: DeliveryJob;
  held: boolean;
  leaseGeneration: number;
}

/** One statistics counter record: per day ('d') or quarter hour ('q'), untagged (tag '') or under one tag with the event's whole tag set. */
export interface TransferStatCounter {
  accountId: string;
  grain: 'd' | 'q';
  tag: string;
  bucket: number;
  channelId: string;
  mailType: MailType;
  /** Sorted, distinct; [] for the untagged total. */
  tagSet: string[];
  counters: StatCounters;
}

/**
 * What a copy checks, by name: each kind's records, and the rows the importing engine derives
 * from them (event terms, TLS-RPT failure details, broadcast counters and statistics, webhook
 * statuses), plus the event log's last seq. The source counts its own entries; the target
 * counts its rows; the copy is good when every name agrees.
 */
export type TransferCountName =
  | Exclude<TransferKind, 'eventLog'>
  | 'eventTerms'
  | 'broadcastCounters'
  | 'broadcastStatistics'
  | 'webhookStatus'
  | 'tlsRptFailures'
  | 'eventLastSeq';

export type TransferCounts = Record<TransferCountName, number>;

/** The exporting engine's side of a copy (store/lmdb/export/). */
export interface TransferSource {
  /** Records per kind as the source holds them, known before the copy: the progress' totals. */
  sizes(): Partial<Record<TransferKind, number>>;
  /** Every record, kind after kind, in batches; the eventLog record last. */
  batches(): AsyncGenerator<TransferBatch>;
  /** Once batches() has run to its end: how many rows of each name the target must hold. */
  counts(): TransferCounts;
}

/** The importing engine's side of a copy (store/postgres/import/). */
export interface TransferTarget {
  /** What of the target holds data already (table names); a copy goes only into an empty target. */
  holdsData(): Promise<string[]>;
  /** Writes one batch; resolves once it is committed. */
  write(batch: TransferBatch): Promise<void>;
  /** What the target holds now, per name, counted by the target itself. */
  counts(): Promise<TransferCounts>;
}
