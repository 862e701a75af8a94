/**
 * The JSON bodies the HTTP API answers with, as TypeScript types: the one declaration the route
 * handlers' response builders return (src/http/routes/*.ts), the services whose results are such
 * an answer as they are declare them with (queue/account-queue.ts, the broadcast list items, a
 * message's statistics), and the dashboard reads its answers as (`import type` from dashboard/src).
 * It lives in domain/ so that services can use it without depending on the HTTP adapter. A change to an answer that breaks one of these shapes
 * fails `npm run typecheck` on the server side, and then on the dashboard side where it reads it.
 *
 * This file imports nothing, and must stay that way: the dashboard's browser build type-checks it
 * with DOM types and no node types, so one import from here (domain/types.ts pulls in more) would
 * drag node's types into the browser check. Hence EventType and the other unions are spelled
 * out here; the routes assign the domain's values to them, so a value added there and not here
 * fails the server's type check.
 *
 * response-schemas.ts states the same shapes for the OpenAPI document (and test/support/openapi-check.ts
 * holds every integration answer against it): a field added to an answer goes in both.
 * Timestamps are ISO 8601 strings.
 */

export type DeliveryType = 'live' | 'sandbox';
export type MailType = 'transactional' | 'broadcast';
export type EventType = 'accepted' | 'processed' | 'delivered' | 'bounced' | 'opened' | 'clicked' | 'complained' | 'unsubscribed' | 'resubscribed' | 'canceled';

export interface Tracking {
  links: boolean;
  opens: boolean;
}

export interface Address {
  email: string;
  name?: string;
}

export interface Attachment {
  fileName: string;
  disposition: string;
  size: number;
}

/** A limit/offset list (channels, domains, webhooks, broadcasts, suppressions...). */
export interface Page<T> {
  totalCount: number;
  results: T[];
}

/** A list on an `after` cursor (GET /activity/events, /activity/messages); X-Page-Partial may mark a short page that is not the last. */
export interface CursorPage<T> extends Page<T> {
  after: number;
}

// ---- API keys ----

/** A key as GET /api-keys lists it: never the secret, only its first characters (`prefix`). */
export interface ApiKeySummary {
  id: string;
  name: string;
  /** null: an account-level key; otherwise the one channel the key acts on. */
  channelId: string | null;
  prefix: string;
  createdAt: string;
}

/** POST /api-keys: the key with its secret, answered this once only. */
export interface CreatedApiKey extends ApiKeySummary {
  key: string;
}

// ---- channels ----

/** GET /channels items. */
export interface ChannelSummary {
  id: string;
  name: string;
  deliveryType: DeliveryType;
  createdAt: string;
}

/** POST /channels, GET and PATCH /channels/{id}. */
export interface ChannelDetail extends ChannelSummary {
  tracking: Tracking;
  /** Absent: the channel's mail goes out through delivery.defaultPools of its mail type. */
  ipPool?: string;
  updatedAt: string;
}

// ---- domains ----

export interface DnsRecord {
  type: 'txt' | 'cname' | 'mx';
  host: string;
  value: string;
  status: 'pending' | 'verified' | 'failing' | 'failed';
  lastCheckedAt: string | null;
  /** What the last lookup of this value found; absent before the first one. */
  check?: DnsRecordCheck;
  /** Why the record cannot work as published with the current settings, and the setting to change. */
  warnings?: SetupWarning[];
  /** Return-path records: the record verified with earlier settings that the domain sends with until this one is verified. */
  replaces?: { host: string; value: string; lastCheckedAt: string | null };
}

/**
 * `missing`: no record of that type at the host; `mismatch`: other values, in `found` (at most 5,
 * each cut at 300 characters, `foundTruncated` when something was cut); `lookup_failed`: DNS did
 * not answer (the status is kept).
 */
export interface DnsRecordCheck {
  result: 'match' | 'missing' | 'mismatch' | 'lookup_failed';
  checkedAt: string;
  found?: string[];
  foundTruncated?: boolean;
}

/** The DMARC record: `inheritedFrom` when the record that applies is the Organizational Domain's (RFC 7489 6.6.3). */
export interface DmarcRecord extends DnsRecord {
  inheritedFrom?: string;
}

/** POST /domains/{id}/verify, and `dnsRecords` of a domain. */
export interface DnsRecords {
  domainKeyActive: DnsRecord;
  domainKeyPending: DnsRecord | null;
  domainKeyActiveCompanion?: DnsRecord;
  domainKeyPendingCompanion?: DnsRecord;
  returnPath: DnsRecord[];
  tracking?: DnsRecord;
  unsubscribe?: DnsRecord;
  dmarc: DmarcRecord;
  /** The domain's own MX (`10 <hostname>`), present while the domain has inbound routes. */
  inbound?: DnsRecord;
}

/** POST /domains/{id}/verify: the dnsRecords object, and whether the domain is verified now. */
export interface VerifyResult extends DnsRecords {
  verified: boolean;
}

export interface DomainChannel {
  id: string;
  name: string;
  deliveryType: DeliveryType;
  deleted: boolean;
}

export interface SetupWarning {
  code: 'hostname_not_fqdn' | 'link_host_not_fqdn' | 'link_host_ip_literal' | 'link_host_not_public' | 'dmarc_report_address_unset';
  setting: 'hostname' | 'publicUrl' | 'domains.dmarcReportAddress';
  message: string;
}

/** GET /domains items, PATCH /domains/{id}. */
export interface DomainSummary {
  id: string;
  createdAt: string;
  name: string;
  verified: boolean;
  channels: DomainChannel[];
}

/** POST /domains, GET /domains/{id}. */
export interface DomainDetail extends DomainSummary {
  dnsRecords: DnsRecords;
  warnings?: SetupWarning[];
}

/** POST /domains/{id}/rotate-key: the new pending DKIM record, and an ed25519 key's RSA companion. */
export interface RotatedKey extends DnsRecord {
  rsaCompanion?: DnsRecord;
}

// ---- webhooks ----

export interface WebhookHeader {
  name: string;
  value: string;
}

export interface WebhookReply {
  statusCode: number | null;
  error: string | null;
  at: string;
}

/** The last answer with the event type it was for. */
export interface LastDelivery extends WebhookReply {
  event: EventType | null;
}

/** Every webhook operation's answer. */
export interface Webhook {
  id: string;
  channelId: string | null;
  url: string;
  payloadSigningKey: string;
  enabled: boolean;
  additionalHeaders: WebhookHeader[];
  events: EventType[];
  lastResponse: WebhookReply | null;
  lastDelivery: LastDelivery | null;
  createdAt: string;
  updatedAt: string;
  deliveryStats: { succeeded: number; failedAttempts: number; failed: number; consecutiveFailures: number; pending: number };
}

/** POST /webhooks/{id}/test. */
export interface WebhookTestOutcome {
  eventType: EventType;
  deliveryId: string;
  statusCode: number | null;
  error: string | null;
  ms: number;
}

// ---- inbound ----

/** Every inbound route operation's answer (issue 33). */
export interface InboundRoute {
  id: string;
  channelId: string;
  /** The account's domain the address is on. */
  domainId: string;
  /** Lower-case, the domain as A-labels; `*@domain` for the catch-all. */
  address: string;
  url: string;
  payloadSigningKey: string;
  enabled: boolean;
  additionalHeaders: WebhookHeader[];
  createdAt: string;
  updatedAt: string;
}

/** GET /inbound/messages items (issue 33). */
export interface InboundMessageItem {
  id: string;
  routeId: string;
  channelId: string;
  receivedAt: string;
  status: 'received' | 'posted' | 'failed';
  envelope: { mailFrom: string; rcptTo: string[] };
  /** The header From's address and the Subject; null when absent or unreadable. */
  from: string | null;
  subject: string | null;
  mailboxHash: string | null;
  size: number;
  attemptCount: number;
  nextAttemptAt: string | null;
}

/** GET /inbound/messages/{id} and the answer of its retry. */
/** A received message's verdicts (domain/auth-verdicts.ts AuthVerdicts, spelled out: this file imports nothing). */
export interface InboundAuthJson {
  spf: { result: 'none' | 'neutral' | 'pass' | 'fail' | 'softfail' | 'temperror' | 'permerror'; domain: string | null };
  dkim: Array<{ domain: string; selector: string; result: 'none' | 'pass' | 'fail' | 'policy' | 'neutral' | 'temperror' | 'permerror' }>;
  dmarc: { result: 'none' | 'pass' | 'fail' | 'temperror' | 'permerror'; domain: string | null; policy: string | null };
  arc: { result: 'none' | 'pass' | 'fail' };
  problem?: string;
}

export interface InboundMessageDetails extends InboundMessageItem {
  clientAddress: string;
  helo: string;
  processedAt: string | null;
  attempts: Array<{ at: string; statusCode: number | null; error: string | null }>;
  /** The SPF, DKIM, DMARC and ARC verdicts (inbound/verify.ts AuthVerdicts); null until processed. */
  auth: InboundAuthJson | null;
}

/** GET /inbound/statistics/daily: received messages per UTC day (`date` YYYY-MM-DD), oldest first, zeros included. */
export interface InboundDailySeries {
  results: { date: string; received: number }[];
}

/** GET /inbound/messages: newest first; `after` continues the list, null after the last page. */
export interface InboundMessagePage {
  results: InboundMessageItem[];
  after: string | null;
}

// ---- send ----

/** POST /send/broadcast. */
export interface BroadcastAccepted {
  status: 'accepted';
  broadcastId: string;
}

// ---- broadcasts ----

/**
 * The SDKs' statuses, and `scheduled` (an extension, issue 34): a scheduled broadcast whose time
 * has not come, not canceled and not completed (broadcasts/service.ts statusOf).
 */
export type BroadcastStatus = 'scheduled' | 'accepted' | 'processing' | 'completed' | 'canceled';

export interface StatCounters {
  sent: number;
  delivered: number;
  bounced: number;
  opened: number;
  clicked: number;
  complained: number;
  unsubscribed: number;
}

/** GET /broadcasts items. */
export interface BroadcastSummary {
  id: string;
  createdAt: string;
  status: BroadcastStatus;
  subject: string;
  /** Entries handled, whole percent rounded down: "42%". */
  completion: string;
  messages: number;
  /** A scheduled broadcast's time (ISO 8601 UTC); absent for one sent at once. */
  scheduledAt?: string;
}

/** GET /broadcasts/{id}, POST /broadcasts/{id}/cancel. */
export interface BroadcastDetail extends BroadcastSummary {
  failed: number;
  suppressed: number;
  canceled: number;
  content: {
    from: Address;
    replyTo?: Address[];
    template: { subject: string; html?: string; text?: string };
    attachments: Attachment[];
    tags: string[];
    headers: Record<string, string>;
    metadata: Record<string, string>;
  };
  tracking: Tracking;
  statistics: StatCounters;
  /** The stored template and version it was sent with (issue 34), when it named one. */
  template?: { id: string; alias?: string; version: number };
}

/** GET /broadcasts/{id}/failures items. */
export interface BroadcastFailure {
  recipients: { to: Address[]; cc?: Address[]; bcc?: Address[] };
  messageIndex: number;
  errorCode: string;
  errorMessage: string;
}

// ---- suppressions ----

export type SuppressionReason = 'bounce' | 'complaint' | 'unsubscribe' | 'manual';

/** GET /suppressions items. */
export interface Suppression {
  email: string;
  reason: SuppressionReason;
  createdAt: string;
}

/** POST /suppressions and /suppressions/remove: one result per address given. */
export interface SuppressionChanges {
  results: { email: string; success: boolean; message: string }[];
}

// ---- activity ----

/** GET /activity/events items. */
export interface ActivityEvent {
  messageId: string;
  channelId: string;
  mailType: MailType;
  eventType: EventType;
  timestamp: string;
  subject: string;
  recipients: string[];
  mailSource: 'api' | 'smtp';
  tags: string[];
  metadata: Record<string, string>;
  details?: Record<string, unknown>;
}

/** The fields a message's list item and its details share. */
export interface MessageHeadline {
  messageId: string;
  channelId: string;
  timestamp: string;
  mailType: MailType;
  mailSource: 'api' | 'smtp';
  deliveryType: DeliveryType;
  /** `scheduled` while a scheduled send waits for its time; `canceled` once canceled (domain/schedule.ts shownStatus). */
  status: 'scheduled' | 'queued' | 'sent' | 'canceled';
  /** A scheduled send's time (ISO 8601, UTC). */
  scheduledAt?: string;
  subject: string;
}

/** The answer of POST /activity/messages/{id}/cancel and PATCH /activity/messages/{id} (issue 34). */
export interface MessageScheduleAnswer {
  messageId: string;
  status: MessageHeadline['status'];
  scheduledAt?: string;
  canceledAt?: string;
}

/** GET /activity/messages items. */
export interface MessageItem extends MessageHeadline {
  recipients: string[];
  /** Absent once retention removed the message record. */
  from?: Address;
}

/** One delivery attempt: `tlsDetail` the session's protocol and cipher or why it ran in plain text, `mtaSts` the policy that applied. */
export interface DeliveryAttempt {
  domain: string;
  at: string;
  mx?: string;
  smtpCode?: number;
  enhancedCode?: string;
  response: string;
  outcome: 'delivered' | 'deferred' | 'bounced';
  tls?: boolean;
  tlsDetail?: { protocol?: string; cipher?: string; verified?: boolean; verifyError?: string; reason?: string; dane?: string };
  mtaSts?: { mode: 'enforce' | 'testing' | 'none'; id: string; failure?: string };
}

export interface MessageEvent {
  eventType: EventType;
  timestamp: string;
  recipients: string[];
  details?: Record<string, unknown>;
}

/** GET /activity/messages/{id}. */
export interface MessageDetails extends MessageHeadline {
  from: Address;
  to: Address[];
  cc?: Address[];
  bcc?: Address[];
  replyTo?: Address[];
  tracking: Tracking;
  events: MessageEvent[];
  text?: string;
  html?: string;
  /** The raw message, cut at 1 MiB (`bodyTruncated`); absent until it is composed. */
  body?: string;
  bodyTruncated?: true;
  tags?: string[];
  headers?: Record<string, string>;
  /** The stored message's header fields, in order, unfolded; absent until it is composed. */
  messageHeaders?: { name: string; value: string }[];
  metadata?: Record<string, string>;
  attachments: Attachment[];
  statistics: Omit<StatCounters, 'sent'>;
  attempts: DeliveryAttempt[];
  /** The stored template and version it was sent with (issue 34), when it named one. */
  template?: { id: string; alias?: string; version: number };
}

// ---- statistics ----

/** GET /statistics/totals. */
export interface StatTotals {
  transactional: StatCounters;
  broadcast: StatCounters;
}

export interface StatPoint extends StatTotals {
  /** The bucket's first instant. */
  timestamp: string;
}

/** GET /statistics/daily and /hourly. */
export interface StatSeries {
  results: StatPoint[];
}

// ---- queue ----

/** The newest delivery attempt's reply (of a job's history, or of a destination's jobs); null before the first attempt. */
export type LastReply = Pick<DeliveryAttempt, 'at' | 'mx' | 'smtpCode' | 'enhancedCode' | 'response' | 'outcome'>;

/** GET /queue items: one recipient domain. */
export interface QueueDestination {
  destination: string;
  /**
   * The MX site delivery counts the destination's connections under (delivery/sites.ts), once the
   * running daemon resolved its MX hosts; the destination itself before that (or without MX).
   */
  site: string;
  /** Messages with a job to it not yet finished (one job per message and domain). */
  messages: number;
  /** Of those, jobs being delivered right now. */
  sending: number;
  /** Of those, messages still being composed and DKIM-signed: not due before. */
  preparing: number;
  oldestQueuedAt: string;
  /** The earliest due time of the waiting jobs; null while none waits for one (all sending or preparing). */
  nextAttemptAt: string | null;
  lastReply: LastReply | null;
}

/** GET /queue. */
export interface QueueSummary {
  results: QueueDestination[];
  /** Destinations found (results holds the first `limit`, most messages first). */
  destinationCount: number;
  /** Queued messages looked at. */
  scannedMessages: number;
  /** Of the messages looked at, those still being composed and DKIM-signed (each once). */
  preparing: number;
  /** False when the scan stopped at its cap: the counts cover the oldest messages only. */
  complete: boolean;
}

export interface QueueJob {
  destination: string;
  recipients: string[];
  /**
   * preparing: its message is still being composed and DKIM-signed (due once signed); queued:
   * waiting for its due time; sending: an attempt is under way; done: finished.
   */
  state: 'preparing' | 'queued' | 'sending' | 'done';
  attempts: number;
  /** The due time while queued; null otherwise (preparing: not scheduled until signed). */
  nextAttemptAt: string | null;
  lastReply: LastReply | null;
}

/** GET /queue/messages items; POST /queue/messages/{id}/retry and DELETE /queue/messages/{id}. */
export interface QueueMessage {
  messageId: string;
  channelId: string;
  subject: string;
  status: 'queued' | 'sent';
  queuedAt: string;
  /** Recipients still waiting, of the destinations shown. */
  to: string[];
  attempts: number;
  nextAttemptAt: string | null;
  lastReply: LastReply | null;
  destinations: QueueJob[];
}

/** GET /queue/messages (no totalCount); X-Page-Partial may mark a short page that is not the last. */
export interface QueueMessagePage {
  results: QueueMessage[];
  after: number;
}

// ---- dashboard session ----

export interface DashboardSession {
  accountId: string;
  keyId: string;
  /** The absolute end. */
  expiresAt: string;
  /** The end if no request comes before it. */
  idleExpiresAt: string;
}

/** GET /dashboard/session (null without a live session); POST answers the session it opened. */
export interface DashboardSessionAnswer<S extends DashboardSession | null = DashboardSession | null> {
  session: S;
}

// ---- dashboard settings ----

/** GET /dashboard/settings (hidden from OpenAPI, like the dashboard's other routes): what the dashboard shows to copy. */
export interface DashboardSettings {
  smtp: {
    /** smtp.enabled: the submission listener runs. */
    enabled: boolean;
    /** The name (or address) clients connect to: never a wildcard bind address. */
    host: string;
    /** STARTTLS submission port (the bound one when smtp.port is 0). */
    port: number;
    /** Implicit-TLS port (RFC 8314), 0 when off. */
    implicitTlsPort: number;
    /** The listener is bound to loopback: only programs on the daemon's machine can connect. */
    localOnly: boolean;
    /** No smtp.tlsCert: the daemon made its own certificate, which clients do not trust by default. */
    selfSignedCertificate: boolean;
  };
}

/** A stored template as listed (issue 34; http/routes/templates.ts). */
export interface TemplateSummaryJson {
  id: string;
  name: string;
  alias: string | null;
  channelIds: string[];
  activeVersion: number;
  latestVersion: number;
  createdAt: string;
  updatedAt: string;
}

/** One version of a stored template. */
export interface TemplateVersionJson {
  version: number;
  subject: string;
  html: string | null;
  text: string | null;
  inlineStyles: boolean;
  createdAt: string;
}

/** A stored template with one of its versions (the active one unless `?version=N`). */
export interface TemplateJson extends TemplateSummaryJson {
  version: TemplateVersionJson;
}

/** POST /templates/{id}/render: the parts rendered with the data given. */
export interface TemplateRenderJson {
  version: number;
  subject: string;
  html: string | null;
  text: string | null;
}

/** POST /templates/render: the parts of content that is not stored, rendered with the data given. */
export type TemplateDraftRenderJson = Omit<TemplateRenderJson, 'version'>;

/** A sending source's reverse DNS check (delivery/source-report.ts PtrCheck). */
export interface SourcePtrJson {
  status: 'confirmed' | 'no_ptr' | 'ptr_mismatch' | 'forward_mismatch' | 'dns_error' | 'not_checked';
  ptrNames: string[];
  forwardAddresses: string[];
}

/**
 * One sending source of GET /ops/sources (issue 35; delivery/source-report.ts SourceView). Each
 * SourceGate adds its own part under its name (`warmup`, `shaping`, `health`, …: source-gates.ts
 * view()), whose fields are that gate's: a reader takes each as optional and unknown.
 */
export interface SourceJson {
  name: string;
  /** null: no address bound, the kernel picks it. */
  address: string | null;
  ehloName: string;
  rate: number | null;
  pools: { pool: string; weight: number }[];
  ptr: SourcePtrJson;
  warmup?: unknown;
  shaping?: unknown;
  health?: unknown;
}

/** GET /ops/sources. */
export interface OpsSources {
  results: SourceJson[];
  /** The pool each mail type goes out through unless its channel names one (delivery.defaultPools). */
  defaultPools: Record<MailType, string>;
}
