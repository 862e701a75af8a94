/**
 * Every LMDB sub-database and its key layout, in one place. Keys are lmdb-js ordered-binary
 * values: arrays sort element by element, which gives prefix scans for the index databases.
 * Values are msgpack (lmdb-js default).
 */
export const DB_NAMES = [
  /**
   * string → any: schema version, generated secrets, the initial account id; for the event log:
   * 'eventSeq' (last seq given out), 'eventClockMs' (event clock), 'eventFloor' (lowest seq not
   * removed by retention); 'channelDeletions' (channels ever deleted: cached event counts made
   * before a deletion are stale, store/purge-queue.ts); 'statChanges/<accountId>' (the account's
   * statistics change marks, domain/stat-changes.ts; stats-changes.ts).
   */
  'meta',
  /** accountId → Account */
  'accounts',
  /** keyId → ApiKey */
  'apiKeys',
  /** sha256(token) hex → keyId */
  'apiKeyHashes',
  /** channelId → Channel */
  'channels',
  /** [accountId, createdAtMs, channelId] → 1: the account's channels in creation order. */
  'accountChannels',
  /** messageId → MessageRecord (envelope, content summary, status). */
  'messages',
  /** messageId → Buffer: the RFC 5322 message as it will be sent, signed (or in `unsigned`, waiting for its signature). */
  'bodies',
  /** jobId → DeliveryJob: one per message and recipient domain. */
  'jobs',
  /** [dueAtMs, jobId] → recipient domain (1 in data written before 0.1): queued jobs by due time, so the dispatcher never scans all jobs. */
  'jobsDue',
  /** seq (integer, increasing) → EventRecord: the append-only event log. */
  'events',
  /** [messageId, seq] → timestampMs: a message's events in order. */
  'messageEvents',
  /**
   * Secondary indexes over the event log, all in seq (= append) order, value = the event's
   * timestampMs (so time filters are checked without loading the event). One DB, keys by kind:
   *   [accountId, 'a', '', seq]            every event of the account
   *   [accountId, 'c', channelId, seq]     by channel
   *   [accountId, 'r', recipient, seq]     by recipient (lowercased), one entry per recipient
   *   [accountId, 't', tag, seq]           by tag, one entry per tag
   *   [accountId, 'm', mailType, seq]      by mail type
   *   [accountId, 'e', eventType, seq]     by event type
   * A filtered query walks one or more [accountId, kind, value] prefixes from a seq onwards
   * (store/activity-query.ts), so it stops after `limit` matches.
   */
  'eventIndex',
  /**
   * [clockMs, seq] → 1: the event clock, the running maximum of event timestamps. An entry is
   * written at each seq where the maximum grows, so "first seq whose clock ≥ T" is one seek
   * (startDate/endDate → seq range).
   */
  'eventClock',
  /** [accountId, utcDay, channelId, mailType] → StatCounters: every event of that day. */
  'statsDaily',
  /**
   * [accountId, tag, utcDay, channelId, mailType, tagSet] → StatCounters: events carrying that
   * tag, split by their whole set of tags (tagSet = JSON of the sorted tags), so a filter on
   * several tags can count an event carrying more than one of them once (store/stats.ts).
   */
  'statsDailyTags',
  /**
   * [accountId, quarterHour, channelId, mailType] → StatCounters, quarterHour = floor(ms / 15 min)
   * in UTC: the statistics series (hourly, and daily in any IANA zone, whose day boundaries all
   * fall on a quarter hour); see store/stats.ts.
   */
  'statsQuarter',
  /** [accountId, tag, quarterHour, channelId, mailType, tagSet] → StatCounters: as statsDailyTags. */
  'statsQuarterTags',
  /**
   * [accountId, acceptedSeq] → timestampMs: messages still `queued`, keyed by the seq of their
   * `accepted` event, so GET /activity/messages?status=queued walks them in the event list's
   * order (store/message-query.ts). Removed when the message becomes `sent`.
   */
  'messageQueue',
  /** [messageId, jobId] → 1: a message's delivery jobs (message details, retention). */
  'messageJobs',
  /** messageId → createdAtMs: messages past retention still waiting for delivery to finish. */
  'retentionPending',
  /** [channelId, mailType, email] → SuppressionRecord */
  'suppressions',
  /**
   * channelId → ChannelPurge: deleted channels whose messages, events and counters are still
   * being removed in the background (store/channel-purge.ts); reads skip these channels.
   */
  'channelPurges',
  /** [accountId, key] → IdempotencyRecord */
  'idempotency',
  /** [expiresAtMs, accountId, key] → 1: idempotency records by expiry, for the sweeper. */
  'idempotencyExpiry',
  /** array key → integer counter, e.g. ['sent', accountId] for the pending-account send limit. */
  'counters',
  /** broadcastId → BroadcastRecord (the accepted request and the expansion cursor). */
  'broadcasts',
  /** [broadcastId, index] → one normalized entry of the broadcast's messages array. */
  'broadcastEntries',
  /** [createdAtMs, broadcastId] → 1: broadcasts still being expanded into messages, oldest first. */
  'broadcastQueue',
  /** [channelId, createdAtMs, broadcastId] → 1: a channel's broadcasts in creation order (GET /broadcasts). */
  'channelBroadcasts',
  /** [broadcastId, messageId] → 1: the messages an expansion created (cancel finds their queued jobs). */
  'broadcastMessages',
  /** [broadcastId, index] → BroadcastFailure: entries that became no message (build error, all suppressed). */
  'broadcastFailures',
  /** [broadcastId, email] → 1: recipients left out of a broadcast because they were suppressed. */
  'broadcastSuppressions',
  /** broadcastId → BroadcastCounters: the broadcast's messages that left the queue, and of those the canceled ones. */
  'broadcastStats',
  /** [broadcastId] → StatCounters: per-broadcast statistics, counted with the others (store/stats.ts). */
  'broadcastStatistics',
  /** domainId → SendingDomain (DNS records and their statuses; no private key material). */
  'domains',
  /** [accountId, createdAtMs, domainId] → 1: the account's domains in creation order. */
  'accountDomains',
  /** [accountId, name] → domainId: names are unique per account; the sender-domain lookup. */
  'domainNames',
  /** [domainId, selector] → DkimPrivateKey: the PEM of the active and the pending key only. */
  'dkimKeys',
  /**
   * [leaseUntilMs, jobId] → 1: jobs handed to a delivery attempt, by lease expiry. A job is in
   * exactly one of jobsDue (state queued) and jobsLeased (state leased), or in neither (done,
   * or queued while its message waits in `unsigned` for its DKIM signature).
   * A lease that outlives its owner (crash) is found here and put back into jobsDue.
   */
  'jobsLeased',
  /** webhookId → Webhook (no signing key). */
  'webhooks',
  /** [accountId, createdAtMs, webhookId] → 1: the account's webhooks (list; the event hook's lookup). */
  'accountWebhooks',
  /** webhookId → signing key (kept apart so reading a webhook never loads it). */
  'webhookSecrets',
  /** webhookId → WebhookStatus: last response and delivery counters. */
  'webhookStatus',
  /** [webhookId, messageId, seq] or [webhookId, messageId, seq, recipientIndex] → OutboxEntry: payloads waiting to reach a webhook (per-recipient event types have one entry per recipient). */
  'webhookOutbox',
  /**
   * [webhookId, dueAtMs, messageId, seq, recipientIndex?] → 1: outbox entries that may be sent, by due time. Only
   * the oldest entry of each (webhook, message) is here, which keeps a message's events in order;
   * the next one comes in when it is done (store/webhook-outbox.ts).
   */
  'webhookDue',
  /**
   * messageId → PendingSignature ({accountId, domain}): messages committed without their DKIM
   * signature. The body in `bodies` is the unsigned message and the message's jobs wait outside
   * jobsDue until submission's signing stage stores the signed body and puts them in
   * (store/signing.ts); at start every entry left here is signed again.
   */
  'unsigned',
  /** [committedMs, messageId] → 1: the `unsigned` entries by commit time, so the oldest waiting is one seek (store/signing.ts). */
  'unsignedByAge',
  /**
   * [accountId, clientMessageId, messageId] → 1: the Message-ID a client gave its own mail (SMTP
   * submission keeps it), without angle brackets, so a feedback report that names only that id
   * finds our message (store/client-message-ids.ts). Messages committed before this index have no entry.
   */
  'clientMessageIds',
  /** [accountId, recipientDomain] → number[]: times (ms) of recent hard DNS failures (NXDOMAIN) of the domain, oldest first (store/dns-failures.ts). */
  'dnsFailures',
  /** recipient domain → CachedStsPolicy: the domain's last fetched MTA-STS policy with its id and expiry (store/mta-sts.ts). */
  'mtaStsPolicies',
  /** ['c', utcDay, policyDomain, policyKey] → TlsRptCounts; ['r', utcDay, policyDomain] → TlsRptReport: TLS-RPT (RFC 8460) daily counts and their report's delivery (store/tls-rpt.ts). */
  'tlsRpt',
  /** sha256(session token) hex → DashboardSession: the web dashboard's sessions (store/dashboard-sessions.ts). */
  'dashboardSessions',
  /** routeId → InboundRoute (no signing key; store/inbound-routes.ts). */
  'inboundRoutes',
  /**
   * The inbound routes' indexes, by kind:
   *   ['a', accountId, createdAtMs, routeId] → 1   the account's routes in creation order (list, limit, deletes)
   *   ['@', address] → routeId                     the route of a normalized address (match; unique)
   *   ['e', domain, createdAtMs, routeId] → 1      the enabled routes of an address's domain in creation
   *                                                order (oldestEnabledOnDomain: postmaster@, RFC 5321 4.5.1);
   *                                                routes written before it get theirs at the data upgrade
   */
  'inboundRouteIndex',
  /** routeId → signing key (kept apart so reading a route never loads it). */
  'inboundRouteSecrets',
  /** templateId → StoredTemplate (store/templates.ts; issue 34). */
  'templates',
  /**
   * The templates' indexes, by kind:
   *   ['a', accountId, createdAtMs, templateId] → 1   the account's templates in creation order (list, limit)
   *   ['@', accountId, alias] → templateId            the template of an alias (unique in the account)
   */
  'templateIndex',
  /** [templateId, version] → TemplateVersion: every version of a template, never changed once stored. */
  'templateVersions',
  /** messageId → StoredInbound (the InboundMessage, its claim's lease and, while claimed, the claim's node; store/inbound-messages.ts). */
  'inboundMessages',
  /** messageId → Buffer: the received message as it came (message/rfc822). */
  'inboundRaw',
  /**
   * The received messages' indexes, by kind:
   *   ['a', accountId, receivedAtMs, messageId] → 1   the account's messages in receive order (list)
   *   ['d', dueAtMs, messageId] → 1                  messages `received` and due for processing (claimDue)
   *   ['f', receivedAtMs, messageId] → 1             messages `posted` or `failed`, oldest first (retention)
   *   ['c', owner, messageId] → 1                    messages claimed by the node `owner` and not finished by it (releaseClaims)
   *   ['n', accountId, utcDay, channelId] → count    routed copies committed that UTC day (statistics; kept by retention)
   */
  'inboundMessageIndex',
  /**
   * [accountId, channelId, grain, bucket] → number[14]: the untagged counters again per UTC quarter
   * hour ('q'), hour ('h') and day ('d'), channel '' for the whole account, both mail types in one
   * record (domain/stat-levels.ts RollupVector): the statistics series read these (store/stats-rollup.ts).
   */
  'statsRollup',
] as const;

export type DbName = (typeof DB_NAMES)[number];

/** Bumped when a layout changes incompatibly; the store refuses to open a newer one. */
export const SCHEMA_VERSION = 1;

/** Upper bound for the last element of a prefix scan over array keys. */
export const KEY_MAX = '\uffff';
