/**
 * The success bodies of the API operations, for the OpenAPI document (contract.ts attaches them
 * by operation; the channel and webhook routes also serialize with theirs). Objects list every
 * field the handlers return and allow no other (additionalProperties: false), so test/support/openapi-check.ts, which holds every answer of
 * the integration suites against the document, fails when a handler returns a field not listed
 * here, or a type other than the one listed.
 *
 * Documentation only by default: a route `response` schema also makes Fastify serialize with
 * fast-json-stringify, which drops a field not listed and coerces a value of an unlisted type
 * (null into "" or 0) instead of failing, and then the check sees the serialized answer only.
 * The channel, webhook and inbound route routes, whose fields the check held against every suite, do serialize
 * with theirs (channelDetailBody, channelPageBody, webhookBody, webhookPageBody, inboundRouteBody, inboundRoutePageBody): a field added
 * to those answers must be added here as well, or it never reaches the client.
 *
 * domain/wire.ts declares the same answers as TypeScript types (the handlers return them, the dashboard
 * reads them): a field changes in both.
 */
import { EVENT_TYPES, MAIL_TYPES } from '../domain/types.js';
import { ERROR_CATALOGUE } from '../domain/errors.js';

type Schema = Record<string, unknown>;

/** An object with exactly these properties; `optional` names the ones that may be absent. */
function obj(properties: Record<string, Schema>, optional: string[] = []): Schema {
  return { type: 'object', additionalProperties: false, required: Object.keys(properties).filter((k) => !optional.includes(k)), properties };
}

const str = { type: 'string' } as const;
const int = { type: 'integer', minimum: 0 } as const;
const bool = { type: 'boolean' } as const;
const uuid = { type: 'string', format: 'uuid' } as const;
const time = { type: 'string', format: 'date-time' } as const;
const nullable = (s: Schema): Schema => ({ ...s, type: [s.type, 'null'] });
const list = (items: Schema): Schema => ({ type: 'array', items });
const page = (items: Schema): Schema => obj({ totalCount: int, results: list(items) });
/** Free-form maps (metadata, headers, event details, template data). */
const map = { type: 'object' } as const;

const deliveryType = { type: 'string', enum: ['live', 'sandbox'] } as const;
const mailType = { type: 'string', enum: [...MAIL_TYPES] } as const;
const eventType = { type: 'string', enum: [...EVENT_TYPES] } as const;
/** A delivery attempt's outcome (DeliveryAttempt). */
const attemptOutcome = { type: 'string', enum: ['delivered', 'deferred', 'bounced'] } as const;
const tracking = obj({ links: bool, opens: bool });

const channelDetail = obj({ id: uuid, name: str, deliveryType, tracking, ipPool: str, createdAt: time, updatedAt: time }, ['ipPool']);
const channelSummary = obj({ id: uuid, name: str, deliveryType, createdAt: time });
/** Route `response` schemas of channels.ts as well: Fastify serializes those answers with them. */
export const channelDetailBody = channelDetail;
export const channelPageBody = page(channelSummary);

/** Present only while the settings make a record unpublishable (domain/setup-warnings.ts)
 *  or the recommended DMARC record has no report address (domain/dmarc-record.ts). */
const setupWarning = obj({
  code: { type: 'string', enum: ['hostname_not_fqdn', 'link_host_not_fqdn', 'link_host_ip_literal', 'link_host_not_public', 'dmarc_report_address_unset'] },
  setting: { type: 'string', enum: ['hostname', 'publicUrl', 'domains.dmarcReportAddress'] },
  message: str,
});
/** What the last lookup of the record's value found (domains/checks.ts); `found` for a mismatch, capped. */
const recordCheck = obj(
  {
    result: { type: 'string', enum: ['match', 'missing', 'mismatch', 'lookup_failed'] },
    checkedAt: time,
    found: { type: 'array', maxItems: 5, items: { type: 'string', maxLength: 301 } },
    foundTruncated: bool,
  },
  ['found', 'foundTruncated'],
);
const dnsRecordFields = {
  type: { type: 'string', enum: ['txt', 'cname', 'mx'] },
  host: str,
  value: str,
  status: { type: 'string', enum: ['pending', 'verified', 'failing', 'failed'] },
  lastCheckedAt: nullable(time),
  check: recordCheck,
  warnings: list(setupWarning),
  /** Return-path records: the one verified with earlier settings that the domain sends with meanwhile (sending-domain.ts currentReturnPath). */
  replaces: obj({ host: str, value: str, lastCheckedAt: nullable(time) }),
};
const dnsRecordOptional = ['check', 'warnings', 'replaces'];
const dnsRecord = obj(dnsRecordFields, dnsRecordOptional);
/** The DMARC record: `inheritedFrom` when the record that applies is the Organizational Domain's (RFC 7489 6.6.3). */
const dmarcRecord = obj({ ...dnsRecordFields, inheritedFrom: str }, [...dnsRecordOptional, 'inheritedFrom']);
const dnsRecordsFields = {
  domainKeyActive: dnsRecord,
  domainKeyPending: { oneOf: [dnsRecord, { type: 'null' }] },
  domainKeyActiveCompanion: dnsRecord,
  domainKeyPendingCompanion: dnsRecord,
  returnPath: list(dnsRecord),
  tracking: dnsRecord,
  unsubscribe: dnsRecord,
  dmarc: dmarcRecord,
  /** The domain's own MX, while it has inbound routes (issue 33). */
  inbound: dnsRecord,
};
const dnsRecordsOptional = ['tracking', 'unsubscribe', 'domainKeyActiveCompanion', 'domainKeyPendingCompanion', 'inbound'];
const dnsRecords = obj(dnsRecordsFields, dnsRecordsOptional);
/** POST /domains/{id}/verify: the dnsRecords object the SDKs parse, and the domain's `verified`. */
const verifyResult = obj({ ...dnsRecordsFields, verified: bool }, dnsRecordsOptional);
const domainChannel = obj({ id: uuid, name: str, deliveryType, deleted: bool });
const domainBase = { id: uuid, createdAt: time, name: str, verified: bool, channels: list(domainChannel) };
const domainWithDns = obj({ ...domainBase, dnsRecords, warnings: list(setupWarning) }, ['warnings']);
const domain = obj(domainBase);

const webhook = obj({
  id: uuid,
  channelId: nullable(uuid),
  url: str,
  payloadSigningKey: str,
  enabled: bool,
  additionalHeaders: list(obj({ name: str, value: str })),
  events: list(eventType),
  lastResponse: { oneOf: [obj({ statusCode: nullable(int), error: nullable(str), at: time }), { type: 'null' }] },
  lastDelivery: {
    oneOf: [obj({ at: time, event: nullable(eventType), statusCode: nullable(int), error: nullable(str) }), { type: 'null' }],
  },
  createdAt: time,
  updatedAt: time,
  deliveryStats: obj({ succeeded: int, failedAttempts: int, failed: int, consecutiveFailures: int, pending: int }),
});
/** Route `response` schemas of webhooks.ts as well. */
export const webhookBody = webhook;
export const webhookPageBody = page(webhook);
/** POST /webhooks/{id}/test (webhooks/service.ts TestOutcome); the route serializes with it too. */
export const webhookTestBody = obj({
  eventType,
  deliveryId: uuid,
  statusCode: nullable(int),
  error: nullable(str),
  ms: int,
});

/** An inbound route (issue 33); inbound-routes.ts serializes with it (inboundRouteBody). */
const inboundRoute = obj({
  id: uuid,
  channelId: uuid,
  domainId: uuid,
  address: str,
  url: str,
  payloadSigningKey: str,
  enabled: bool,
  additionalHeaders: list(obj({ name: str, value: str })),
  createdAt: time,
  updatedAt: time,
});
export const inboundRouteBody = inboundRoute;
export const inboundRoutePageBody = page(inboundRoute);

/** A stored template (issue 34; routes/templates.ts), as listed and with one version. */
const templateSummary = {
  id: uuid,
  name: str,
  alias: nullable(str),
  channelIds: list(uuid),
  activeVersion: int,
  latestVersion: int,
  createdAt: time,
  updatedAt: time,
};
const templateVersion = obj({ version: int, subject: str, html: nullable(str), text: nullable(str), inlineStyles: bool, createdAt: time });
const templateDetail = obj({ ...templateSummary, version: templateVersion });
const templateRender = obj({ version: int, subject: str, html: nullable(str), text: nullable(str) });
const templateDraftRender = obj({ subject: str, html: nullable(str), text: nullable(str) });

/** An inbound message (issue 33) as listed, and with its POST attempts and verdicts as retrieved; inbound-messages.ts serializes with them. */
const inboundSummary = {
  id: uuid,
  routeId: uuid,
  channelId: uuid,
  receivedAt: time,
  status: { type: 'string', enum: ['received', 'posted', 'failed'] },
  envelope: obj({ mailFrom: str, rcptTo: list(str) }),
  from: nullable(str),
  subject: nullable(str),
  mailboxHash: nullable(str),
  size: int,
  attemptCount: int,
  nextAttemptAt: nullable(time),
};
const inboundVerdicts = obj(
  {
    spf: obj({ result: str, domain: nullable(str) }),
    dkim: list(obj({ domain: str, selector: str, result: str })),
    dmarc: obj({ result: str, domain: nullable(str), policy: nullable(str) }),
    arc: obj({ result: str }),
    problem: str,
  },
  ['problem'],
);
const inboundDetail = obj({
  ...inboundSummary,
  clientAddress: str,
  helo: str,
  processedAt: nullable(time),
  attempts: list(obj({ at: time, statusCode: nullable(int), error: nullable(str) })),
  auth: { ...inboundVerdicts, type: ['object', 'null'] },
});
export const inboundMessageBody = inboundDetail;
export const inboundMessagePageBody = obj({ results: list(obj(inboundSummary)), after: nullable(str) });
/** Received messages per UTC day (issue 33); inbound-messages.ts serializes with it. */
export const inboundDailyBody = obj({ results: list(obj({ date: { type: 'string', format: 'date' }, received: int })) });

const accepted = obj({ status: { const: 'accepted' }, messageId: uuid, suppressions: list(str) });
const batchFailed = obj({ status: { const: 'failed' }, errorCode: { type: 'string', enum: Object.keys(ERROR_CATALOGUE) }, errorMessage: str });

const broadcastSummary = {
  id: uuid,
  createdAt: time,
  // `scheduled` extends the SDKs' statuses (a scheduled broadcast before its time).
  status: { type: 'string', enum: ['scheduled', 'accepted', 'processing', 'completed', 'canceled'] },
  subject: str,
  completion: str,
  messages: int,
  scheduledAt: time,
};
/** Which stored template and version a message or broadcast was sent with (domain/template.ts TemplateOrigin). */
const storedTemplateOrigin = obj({ id: uuid, alias: str, version: { type: 'integer', minimum: 1 } }, ['alias']);
const statCounters = obj({ sent: int, delivered: int, bounced: int, opened: int, clicked: int, complained: int, unsubscribed: int });
const broadcastDetail = obj({
  ...broadcastSummary,
  failed: int,
  suppressed: int,
  canceled: int,
  content: obj({
    from: {},
    replyTo: {},
    template: obj({ subject: str, html: {}, text: {} }, ['html', 'text']),
    attachments: list(obj({ fileName: str, disposition: str, size: int })),
    tags: list(str),
    headers: map,
    metadata: map,
  }, ['replyTo']),
  tracking,
  statistics: statCounters,
  /** The stored template and version the broadcast was sent with (issue 34). */
  template: storedTemplateOrigin,
}, ['template', 'scheduledAt']);

const suppressionChange = obj({ email: str, success: bool, message: str });

const event = obj({
  messageId: uuid,
  channelId: uuid,
  mailType,
  eventType,
  timestamp: time,
  subject: str,
  recipients: list(str),
  mailSource: str,
  tags: list(str),
  metadata: map,
  details: {},
}, ['details']);
/** A message's status as the activity API shows it (domain/schedule.ts shownStatus). */
const messageStatus = { type: 'string', enum: ['scheduled', 'queued', 'sent', 'canceled'] } as const;

/** The answer of a message's cancel and reschedule (domain/wire.ts MessageScheduleAnswer). */
const scheduleAnswer = obj({ messageId: uuid, status: messageStatus, scheduledAt: time, canceledAt: time }, ['scheduledAt', 'canceledAt']);

/** `from` is absent once retention removed the message record (its accepted event may stay longer). */
const messageItem = obj(
  { messageId: uuid, channelId: uuid, timestamp: time, mailType, mailSource: str, deliveryType, status: messageStatus, scheduledAt: time, subject: str, recipients: list(str), from: obj({ email: str, name: str }, ['name']) },
  ['from', 'scheduledAt'],
);

const totals = obj({ transactional: statCounters, broadcast: statCounters });
const series = obj({ results: list(obj({ timestamp: time, transactional: statCounters, broadcast: statCounters })) });

/**
 * One delivery attempt of the message (DeliveryAttempt with the job's domain): `tls` whether the
 * session was encrypted, `tlsDetail` its protocol and cipher or why it ran in plain text, `mtaSts`
 * the recipient domain's policy that applied (with what failed, or would have under `testing`).
 */
const deliveryAttempt = obj(
  {
    domain: str,
    at: time,
    mx: str,
    smtpCode: int,
    enhancedCode: str,
    response: str,
    outcome: attemptOutcome,
    tls: bool,
    tlsDetail: obj({ protocol: str, cipher: str, verified: bool, verifyError: str, reason: str, dane: str }, ['protocol', 'cipher', 'verified', 'verifyError', 'reason', 'dane']),
    mtaSts: obj({ mode: { type: 'string', enum: ['enforce', 'testing', 'none'] }, id: str, failure: str }, ['failure']),
  },
  ['mx', 'smtpCode', 'enhancedCode', 'tls', 'tlsDetail', 'mtaSts'],
);

/** Spec 2.6 plus `attempts` and `bodyTruncated` (activity.ts messageDetails). */
const messageDetails = obj(
  {
    messageId: uuid,
    channelId: uuid,
    timestamp: time,
    mailType,
    mailSource: str,
    deliveryType,
    status: messageStatus,
    scheduledAt: time,
    subject: str,
    from: {},
    to: {},
    cc: {},
    bcc: {},
    replyTo: {},
    tracking,
    events: list(obj({ eventType, timestamp: time, recipients: list(str), details: {} }, ['details'])),
    text: {},
    html: {},
    body: str,
    bodyTruncated: { const: true },
    tags: list(str),
    headers: map,
    /** The header fields of the stored message, in order (activity/queries.ts headerFieldsOf); absent until it is composed. */
    messageHeaders: list(obj({ name: str, value: str })),
    metadata: map,
    attachments: list(obj({ fileName: str, disposition: str, size: int })),
    statistics: obj({ delivered: int, bounced: int, opened: int, clicked: int, complained: int, unsubscribed: int }),
    attempts: list(deliveryAttempt),
    /** The stored template and version the message was sent with (issue 34). */
    template: storedTemplateOrigin,
  },
  ['scheduledAt', 'cc', 'bcc', 'replyTo', 'text', 'html', 'body', 'bodyTruncated', 'tags', 'headers', 'messageHeaders', 'metadata', 'template'],
);

/** The newest delivery attempt's reply (domain/wire.ts LastReply); null before the first attempt. */
const lastReply = {
  oneOf: [
    obj(
      { at: time, mx: str, smtpCode: int, enhancedCode: str, response: str, outcome: attemptOutcome },
      ['mx', 'smtpCode', 'enhancedCode'],
    ),
    { type: 'null' },
  ],
};
const queueDestination = obj({
  destination: str,
  site: str,
  messages: int,
  sending: int,
  preparing: { ...int, description: 'Messages still being composed and DKIM-signed after their commit: not due before' },
  oldestQueuedAt: time,
  nextAttemptAt: { ...nullable(time), description: 'The earliest due time of the waiting jobs; null while none waits for one (all being sent or prepared)' },
  lastReply,
});
const queueJob = obj({
  destination: str,
  recipients: list(str),
  state: {
    type: 'string',
    enum: ['preparing', 'queued', 'sending', 'done'],
    description: 'preparing: the message is still being composed and DKIM-signed (due once signed); queued: waiting for its due time; sending: an attempt is under way; done: finished',
  },
  attempts: int,
  nextAttemptAt: { ...nullable(time), description: 'The due time while queued; null otherwise (preparing: not scheduled until the message is signed)' },
  lastReply,
});
/** One queued message (GET /queue/messages items, and the answer of its retry and drop). */
const queueMessage = obj({
  messageId: uuid,
  channelId: uuid,
  subject: str,
  status: { type: 'string', enum: ['queued', 'sent'] },
  queuedAt: time,
  to: list(str),
  attempts: int,
  nextAttemptAt: nullable(time),
  lastReply,
  destinations: list(queueJob),
});

/** The success body of each operation that answers JSON, by "METHOD /path". */
/** An API key as listed (never the secret), and as created (with it, this once). */
const apiKeySummary = { id: uuid, name: str, channelId: nullable(uuid), prefix: str, createdAt: time };

export const SUCCESS_BODIES: Record<string, Schema> = {
  'GET /api-keys': page(obj(apiKeySummary)),
  'POST /api-keys': obj({ ...apiKeySummary, key: str }),

  'POST /channels': channelDetail,
  'GET /channels': channelPageBody,
  'GET /channels/{id}': channelDetail,
  'PATCH /channels/{id}': channelDetail,

  'POST /domains': domainWithDns,
  'GET /domains': page(domain),
  'GET /domains/{id}': domainWithDns,
  'PATCH /domains/{id}': domain,
  'POST /domains/{id}/verify': verifyResult,
  'POST /domains/{id}/rotate-key': obj({ ...(dnsRecord.properties as Record<string, Schema>), rsaCompanion: dnsRecord }, [...dnsRecordOptional, 'rsaCompanion']),

  'POST /webhooks': webhook,
  'GET /webhooks': webhookPageBody,
  'GET /webhooks/{id}': webhook,
  'PATCH /webhooks/{id}': webhook,
  'POST /webhooks/{id}/regenerate-signing-key': webhook,
  'POST /webhooks/{id}/test': webhookTestBody,

  'POST /inbound/routes': inboundRoute,
  'GET /inbound/routes': inboundRoutePageBody,
  'GET /inbound/routes/{id}': inboundRoute,
  'PATCH /inbound/routes/{id}': inboundRoute,
  'POST /inbound/routes/{id}/regenerate-signing-key': inboundRoute,

  'POST /templates': templateDetail,
  'GET /templates': page(obj(templateSummary)),
  'GET /templates/{idOrAlias}': templateDetail,
  'PATCH /templates/{idOrAlias}': templateDetail,
  'GET /templates/{idOrAlias}/versions': page(templateVersion),
  'POST /templates/{idOrAlias}/activate': templateDetail,
  'POST /templates/{idOrAlias}/render': templateRender,
  'POST /templates/render': templateDraftRender,

  'GET /inbound/messages': inboundMessagePageBody,
  'GET /inbound/statistics/daily': inboundDailyBody,
  'GET /inbound/messages/{id}': inboundDetail,
  'POST /inbound/messages/{id}/retry': inboundDetail,

  'POST /send/transactional': accepted,
  'POST /send/broadcast/message': accepted,
  'POST /send/transactional/batch': obj({ responses: list({ oneOf: [accepted, batchFailed] }) }),
  'POST /send/broadcast': obj({ status: { const: 'accepted' }, broadcastId: uuid }),

  'GET /broadcasts': page(obj(broadcastSummary, ['scheduledAt'])),
  'GET /broadcasts/{id}': broadcastDetail,
  'POST /broadcasts/{id}/cancel': broadcastDetail,
  'GET /broadcasts/{id}/failures': page(obj({ recipients: obj({ to: {}, cc: {}, bcc: {} }, ['cc', 'bcc']), messageIndex: int, errorCode: str, errorMessage: str })),
  'GET /broadcasts/{id}/suppressions': page(str),

  'POST /suppressions': obj({ results: list(suppressionChange) }),
  'POST /suppressions/remove': obj({ results: list(suppressionChange) }),
  'GET /suppressions': page(obj({ email: str, reason: { type: 'string', enum: ['bounce', 'complaint', 'unsubscribe', 'manual'] }, createdAt: time })),

  'GET /activity/events': obj({ totalCount: int, results: list(event), after: {} }),
  'GET /activity/messages': obj({ totalCount: int, after: {}, results: list(messageItem) }),
  'GET /activity/messages/{id}': messageDetails,

  'GET /statistics/totals': totals,
  'GET /activity/statistics/totals': totals,
  'GET /statistics/daily': series,
  'GET /activity/statistics/daily': series,
  'GET /statistics/hourly': series,
  'GET /activity/statistics/hourly': series,

  'GET /queue': obj({
    results: list(queueDestination),
    destinationCount: int,
    scannedMessages: int,
    preparing: { ...int, description: 'Of the messages looked at, those still being composed and DKIM-signed (each counted once)' },
    complete: bool,
  }),
  'GET /queue/messages': obj({ results: list(queueMessage), after: int }),
  'POST /queue/messages/{id}/retry': queueMessage,
  'DELETE /queue/messages/{id}': queueMessage,
  'POST /activity/messages/{id}/cancel': scheduleAnswer,
  'PATCH /activity/messages/{id}': scheduleAnswer,

  'GET /errors/{code}': obj({ code: { type: 'string', enum: Object.keys(ERROR_CATALOGUE) }, status: int, title: str }),
};

/** A source's automatic shapings that hold now (delivery/shaping-gate.ts ShapingGate.view). */
const shapingView = obj({
  active: list(
    obj({
      site: { type: 'string', description: 'An MX site, or provider:<id> for a rule that holds at every site of a provider: the {site} of DELETE /ops/sources/{source}/shaping/{site}' },
      triggeredBy: { type: 'string', description: 'The site whose reply matched the rule' },
      rule: str,
      action: obj({ kind: { type: 'string', enum: ['suspend', 'ceiling'] }, concurrency: int, perSecond: { type: 'number' } }, ['concurrency', 'perSecond']),
      since: time,
      until: time,
    }),
  ),
});

/** A warming source's progress (delivery/warmup-view.ts WarmupView); a cap of null: that curve has ended. */
const warmupCount = obj({ sent: int, cap: nullable({ type: 'integer', minimum: 1 }) });
const warmupView = obj({
  start: { type: 'string', format: 'date' },
  day: int,
  days: int,
  complete: bool,
  sites: list(obj({ key: str, curve: str, today: warmupCount, thisHour: warmupCount })),
});
/** A source's part of GET /ops/sources from the health gate (delivery/source-health.ts SourceHealthView). */
const sourceHealthView = obj({
  status: { type: 'string', enum: ['ok', 'out'], description: 'out: taken out of its pools on this node for failing' },
  since: { type: ['string', 'null'], format: 'date-time', description: 'When it went out or came back; null when it never changed' },
  until: { type: ['string', 'null'], format: 'date-time', description: 'While out: when it gets its probe attempt (in the past: the probe is due)' },
  reason: { type: ['string', 'null'] },
  cause: { type: ['string', 'null'], enum: ['address_unavailable', 'connect_failures', null] },
  consecutiveFailures: int,
});

/** GET /ops/sources (delivery/source-report.ts SourceView). */
const sourceView = obj({
  name: str,
  address: { type: ['string', 'null'] },
  ehloName: str,
  rate: { type: ['integer', 'null'] },
  pools: { type: 'array', items: obj({ pool: str, weight: int }) },
  ptr: obj({
    status: { type: 'string', enum: ['confirmed', 'no_ptr', 'ptr_mismatch', 'forward_mismatch', 'dns_error', 'not_checked'] },
    ptrNames: { type: 'array', items: str },
    forwardAddresses: { type: 'array', items: str },
  }),
  // The gates' views (delivery/source-gates.ts), present while delivery.sources is configured.
  warmup: warmupView,
  shaping: shapingView,
  health: sourceHealthView,
}, ['warmup', 'shaping', 'health']);
export const sourcesBody = obj({
  results: { type: 'array', items: sourceView },
  defaultPools: { ...obj({ transactional: str, broadcast: str }), description: 'The pool each mail type goes out through unless its channel names one (delivery.defaultPools)' },
});
