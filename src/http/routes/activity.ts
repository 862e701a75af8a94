/** GET /activity/events and GET /activity/messages/{id}: spec 4.13, 4.14 (items 2.7, 2.6). */
import type { FastifyInstance } from 'fastify';
import { AppError, FieldErrorList } from '../../domain/errors.js';
import { EVENT_TYPES, MAIL_TYPES, type EventRecord, type EventType, type MailType, type MessageRecord, type Principal } from '../../domain/types.js';
import { ActivityQueries, type ActivityFilter } from '../../store/activity-query.js';
import type { Store } from '../../store/env.js';
import { accountOfMessageEvents, eventsOfMessage } from '../../store/events.js';
import { jobsOfMessage } from '../../store/message-jobs.js';
import { getBody, getMessage } from '../../store/messages.js';
import { MessageQueries, type MessageListItem } from '../../store/message-query.js';
import { getChannelRecord } from '../../store/channels.js';
import { counterOf } from '../../store/stats.js';
import { isUuid } from '../auth.js';
import { channelInScope, parseDateRange, parseTags, schemaErrors, text } from '../query-params.js';
import { splitList } from '../schemas.js';
import type { HttpContext } from '../server.js';

/** Raw messages above this are cut in message details (`bodyTruncated: true`). */
export const BODY_LIMIT_BYTES = 1024 * 1024;

const eventsQuery = {
  type: 'object',
  additionalProperties: false,
  properties: {
    channelId: { type: 'string', maxLength: 64 },
    messageId: { type: 'string', maxLength: 64 },
    after: { type: 'integer', minimum: 0, maximum: Number.MAX_SAFE_INTEGER },
    startDate: { type: 'string', format: 'date-time' },
    endDate: { type: 'string', format: 'date-time' },
    limit: { type: 'integer', minimum: 1, maximum: 500 },
    recipient: { type: 'string', minLength: 1, maxLength: 320 },
    subject: { type: 'string', minLength: 1, maxLength: 256 },
    tags: { type: 'string', maxLength: 2_500 },
    mailType: { type: 'string', enum: MAIL_TYPES },
    eventTypes: { type: 'string', maxLength: 500 },
  },
} as const;

/** GET /activity/messages: the event list's filters, without messageId and eventTypes, plus status. */
const { messageId: _m, eventTypes: _e, ...messageFilterProps } = eventsQuery.properties;
const messagesQuery = {
  type: 'object',
  additionalProperties: false,
  properties: { ...messageFilterProps, status: { type: 'string', enum: ['queued', 'sent'] } },
} as const;

interface EventsQuery {
  channelId?: string;
  messageId?: string;
  after?: number;
  startDate?: string;
  endDate?: string;
  limit?: number;
  recipient?: string;
  subject?: string;
  tags?: string;
  mailType?: MailType;
  eventTypes?: string;
  status?: 'queued' | 'sent';
}

function checkMessageScope(p: Principal, owner: { accountId: string; channelId: string }): void {
  if (owner.accountId !== p.accountId || (p.channelId && p.channelId !== owner.channelId)) {
    throw new AppError('forbidden', 'The API key may not access this message');
  }
}

function buildFilter(store: Store, p: Principal, q: EventsQuery, errors: FieldErrorList): ActivityFilter {
  // Values the schema refused may have any type: only strings are looked at here, the schema
  // errors already name the rest.
  if (typeof q.channelId === 'string' && !isUuid(q.channelId)) errors.add('/channelId', 'invalid_format', 'must be a UUID');
  if (typeof q.messageId === 'string' && !isUuid(q.messageId)) errors.add('/messageId', 'invalid_format', 'must be a UUID');
  const tags = parseTags(text(q.tags), errors);
  const eventTypes = splitList(text(q.eventTypes));
  eventTypes?.forEach((t, i) => (EVENT_TYPES as readonly string[]).includes(t) || errors.add(`/eventTypes/${i}`, 'invalid_value', `must be one of: ${EVENT_TYPES.join(', ')}`));
  const { fromMs, toMs } = parseDateRange({ from: text(q.startDate), to: text(q.endDate) }, { from: 'startDate', to: 'endDate' }, errors);
  errors.throwIfAny('The query has invalid parameters');

  const filter: ActivityFilter = {
    accountId: p.accountId,
    channelId: q.channelId !== undefined ? channelInScope(store, p, q.channelId) : (p.channelId ?? undefined),
    recipient: q.recipient?.trim().toLowerCase() || undefined,
    subject: q.subject,
    tags,
    mailType: q.mailType,
    eventTypes: eventTypes && eventTypes.length > 0 ? (eventTypes as EventType[]) : undefined,
    startMs: fromMs,
    endMs: toMs,
  };
  if (q.messageId !== undefined) {
    const id = q.messageId.toLowerCase();
    const m = getMessage(store, id);
    const owner = m ? { accountId: m.accountId, channelId: m.channelId } : accountOfMessageEvents(store, id);
    if (owner) checkMessageScope(p, owner);
    filter.messageId = id;
  }
  return filter;
}

/** Spec 2.7. */
function eventItem(e: EventRecord) {
  return {
    messageId: e.messageId,
    channelId: e.channelId,
    mailType: e.mailType,
    eventType: e.eventType,
    timestamp: e.timestamp,
    subject: e.subject,
    recipients: e.recipients,
    mailSource: e.mailSource,
    tags: e.tags,
    metadata: e.metadata,
    details: e.details,
  };
}

/** api-surface activity.listMessages item. */
function messageItem(store: Store, { accepted: e, message: m }: MessageListItem) {
  return {
    messageId: e.messageId,
    channelId: e.channelId,
    timestamp: e.timestamp,
    mailType: e.mailType,
    mailSource: e.mailSource,
    // A record already removed by retention belonged to a finished message.
    deliveryType: m?.deliveryType ?? getChannelRecord(store, e.channelId)?.deliveryType ?? 'live',
    status: m?.status ?? 'sent',
    subject: e.subject,
    recipients: e.recipients,
  };
}

/** Spec 2.6, plus `attempts` (delivery history) and `bodyTruncated` when the body was cut. */
function messageDetails(store: Store, m: MessageRecord) {
  const events = eventsOfMessage(store, m.id);
  const statistics = { delivered: 0, bounced: 0, opened: 0, clicked: 0, complained: 0, unsubscribed: 0 };
  // The counting rule of store/stats.ts: a recipient is delivered or bounced, never both; a
  // bounce after the delivery moves it, a repeated bounce counts once.
  const outcome = new Map<string, 'delivered' | 'bounced'>();
  for (const e of events) {
    const c = counterOf(e);
    if (!c || !(c.name in statistics)) continue;
    if (e.eventType !== 'bounced') {
      statistics[c.name as keyof typeof statistics] += c.by;
      if (e.eventType === 'delivered') for (const r of e.recipients) if (!outcome.has(r.toLowerCase())) outcome.set(r.toLowerCase(), 'delivered');
      continue;
    }
    for (const r of new Set(e.recipients.map((x) => x.toLowerCase()))) {
      if (outcome.get(r) === 'bounced') continue;
      if (outcome.get(r) === 'delivered') statistics.delivered--;
      outcome.set(r, 'bounced');
      statistics.bounced++;
    }
  }
  const raw = getBody(store, m.id);
  const attempts = jobsOfMessage(store, m.id)
    // A job's recipients shrink as some are delivered, so an attempt names its domain only.
    .flatMap((job) => job.history.map((a) => ({ domain: job.domain, ...a })))
    .sort((a, b) => a.at.localeCompare(b.at));
  return {
    messageId: m.id,
    channelId: m.channelId,
    timestamp: m.createdAt,
    mailType: m.mailType,
    mailSource: m.mailSource,
    deliveryType: m.deliveryType,
    status: m.status,
    subject: m.subject,
    from: m.from,
    to: m.to,
    cc: m.cc,
    bcc: m.bcc,
    replyTo: m.replyTo,
    tracking: m.tracking,
    events: events.map((e) => ({ eventType: e.eventType, timestamp: e.timestamp, recipients: e.recipients, details: e.details })),
    text: m.text,
    html: m.html,
    body: raw ? Buffer.from(raw.subarray(0, BODY_LIMIT_BYTES)).toString('utf8') : undefined,
    ...(raw && raw.length > BODY_LIMIT_BYTES ? { bodyTruncated: true } : {}),
    tags: m.tags,
    headers: m.headers,
    metadata: m.metadata,
    attachments: m.attachments.map((a) => ({ fileName: a.fileName, disposition: a.disposition, size: a.size })),
    statistics,
    attempts,
  };
}

export function activityRoutes(app: FastifyInstance, { store }: HttpContext): void {
  const queries = new ActivityQueries(store);

  app.get('/activity/events', { schema: { querystring: eventsQuery }, attachValidation: true }, async (req, reply) => {
    const q = req.query as EventsQuery;
    const filter = buildFilter(store, req.principal, q, schemaErrors(req));
    const page = queries.page(filter, { afterSeq: q.after ?? 0, limit: q.limit ?? 100 });
    if (!page.totalCountExact) reply.header('x-total-count-estimated', 'true');
    if (page.partial) reply.header('x-page-partial', 'true');
    return { totalCount: page.totalCount, results: page.results.map(eventItem), after: page.after };
  });

  const messages = new MessageQueries(store);
  app.get('/activity/messages', { schema: { querystring: messagesQuery }, attachValidation: true }, async (req, reply) => {
    const q = req.query as EventsQuery;
    const { eventTypes: _t, messageId: _id, ...filter } = buildFilter(store, req.principal, q, schemaErrors(req));
    const page = messages.page({ ...filter, messageStatus: q.status }, { afterSeq: q.after ?? 0, limit: q.limit ?? 100 });
    if (!page.totalCountExact) reply.header('x-total-count-estimated', 'true');
    if (page.partial) reply.header('x-page-partial', 'true');
    return { totalCount: page.totalCount, after: page.after, results: page.results.map((item) => messageItem(store, item)) };
  });

  app.get('/activity/messages/:id', async (req) => {
    const { id } = req.params as { id: string };
    const m = isUuid(id) ? getMessage(store, id.toLowerCase()) : undefined;
    if (!m) throw new AppError('not_found', `Message ${id} does not exist`);
    checkMessageScope(req.principal, m);
    // A deleted channel's messages are gone from the 204 on, even before the purger reaches them.
    if (getChannelRecord(store, m.channelId)?.deletedAt) throw new AppError('not_found', `Message ${id} does not exist`);
    return messageDetails(store, m);
  });
}
