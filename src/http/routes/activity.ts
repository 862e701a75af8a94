/** GET /activity/events and GET /activity/messages/{id}: spec 4.13, 4.14 (items 2.7, 2.6). */
import type { FastifyInstance } from 'fastify';
import { ActivityReads, type MessageHistory, type MessageItem } from '../../activity/queries.js';
import type { FieldErrorList } from '../../domain/errors.js';
import { EVENT_TYPES, MAIL_TYPES, type EventRecord, type EventType, type MailType, type MessageRecord, type Principal } from '../../domain/types.js';
import type { ActivityFilter } from '../../store/port/events.js';
import type { StorePort } from '../../store/port/index.js';
import { isUuid } from '../../domain/uuid.js';
import { shownStatus } from '../../domain/schedule.js';
import { channelInScope, parseDateRange, parseTags, schemaErrors, text } from '../query-params.js';
import { splitList } from '../schemas.js';
import type { HttpContext } from '../server.js';
import type { ActivityEvent, CursorPage, MessageDetails, MessageItem as MessageItemBody } from '../../domain/wire.js';

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
    order: { type: 'string', enum: ['asc', 'desc'] },
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
  /** 'asc' (default): oldest first, `after` continues after; 'desc': newest first, `after` continues before. */
  order?: 'asc' | 'desc';
}

function pageOptions(q: EventsQuery): { afterSeq: number; limit: number; order: 'asc' | 'desc' } {
  return { afterSeq: q.after ?? 0, limit: q.limit ?? 100, order: q.order ?? 'asc' };
}

async function buildFilter(store: StorePort, reads: ActivityReads, p: Principal, q: EventsQuery, errors: FieldErrorList): Promise<ActivityFilter> {
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
    channelId: q.channelId !== undefined ? await channelInScope(store, p, q.channelId) : (p.channelId ?? undefined),
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
    await reads.checkMessageFilter(p, id);
    filter.messageId = id;
  }
  return filter;
}

/** Spec 2.7. */
function eventItem(e: EventRecord): ActivityEvent {
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

/**
 * api-surface activity.listMessages item, plus `from` (the dashboard's sandbox inbox lists the
 * sender), absent once retention removed the message record.
 */
function messageItem({ accepted: e, message: m, deliveryType }: MessageItem, nowMs: number): MessageItemBody {
  return {
    messageId: e.messageId,
    channelId: e.channelId,
    timestamp: e.timestamp,
    mailType: e.mailType,
    mailSource: e.mailSource,
    deliveryType,
    status: m ? shownStatus(m, nowMs) : 'sent',
    ...(m?.scheduledAt !== undefined && { scheduledAt: m.scheduledAt }),
    subject: e.subject,
    recipients: e.recipients,
    ...(m ? { from: m.from } : {}),
  };
}

/**
 * Spec 2.6, plus `attempts` (delivery history), `bodyTruncated` when the body was cut and
 * `messageHeaders`, the header fields of the message as stored (spec `headers` stays the custom
 * headers of the request).
 */
function messageDetails(m: MessageRecord, { events, statistics, raw, headerFields, attempts }: MessageHistory, nowMs: number): MessageDetails {
  return {
    messageId: m.id,
    channelId: m.channelId,
    timestamp: m.createdAt,
    mailType: m.mailType,
    mailSource: m.mailSource,
    deliveryType: m.deliveryType,
    status: shownStatus(m, nowMs),
    ...(m.scheduledAt !== undefined && { scheduledAt: m.scheduledAt }),
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
    ...(headerFields ? { messageHeaders: headerFields } : {}),
    metadata: m.metadata,
    attachments: m.attachments.map((a) => ({ fileName: a.fileName, disposition: a.disposition, size: a.size })),
    statistics,
    attempts,
    ...(m.template && { template: m.template }),
  };
}

export function activityRoutes(app: FastifyInstance, { store }: HttpContext): void {
  const reads = new ActivityReads(store);

  app.get('/activity/events', { schema: { querystring: eventsQuery }, attachValidation: true }, async (req, reply): Promise<CursorPage<ActivityEvent>> => {
    const q = req.query as EventsQuery;
    const filter = await buildFilter(store, reads, req.principal, q, schemaErrors(req));
    const page = await reads.eventPage(filter, pageOptions(q));
    if (!page.totalCountExact) reply.header('x-total-count-estimated', 'true');
    if (page.partial) reply.header('x-page-partial', 'true');
    return { totalCount: page.totalCount, results: page.results.map(eventItem), after: page.after };
  });

  app.get('/activity/messages', { schema: { querystring: messagesQuery }, attachValidation: true }, async (req, reply): Promise<CursorPage<MessageItemBody>> => {
    const q = req.query as EventsQuery;
    const { eventTypes: _t, messageId: _id, ...filter } = await buildFilter(store, reads, req.principal, q, schemaErrors(req));
    const page = await reads.messagePage({ ...filter, messageStatus: q.status }, pageOptions(q));
    if (!page.totalCountExact) reply.header('x-total-count-estimated', 'true');
    if (page.partial) reply.header('x-page-partial', 'true');
    return { totalCount: page.totalCount, after: page.after, results: page.results.map((item) => messageItem(item, Date.now())) };
  });

  app.get('/activity/messages/:id', async (req): Promise<MessageDetails> => {
    const m = await reads.visibleMessage(req.principal, (req.params as { id: string }).id);
    return messageDetails(m, await reads.history(m), Date.now());
  });
}
