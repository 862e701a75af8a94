/**
 * /inbound/messages (issue 33): the mail received for an account's inbound routes, with the
 * POSTs of each to its route's URL and their answers, the message as received, its
 * attachments (the link a payload carries for one too large to inline) and its retry.
 *
 * Access (checked by InboundMessageService, which each handler calls once): an account key or a
 * channel key of the message's channel; another account's or channel's message is 403, an
 * unknown one 404 not_found; the retry needs an account-level key and a `failed` message (409
 * conflict otherwise).
 *
 * The list is newest first, paged by cursor as the activity lists are: `limit` (1-500, default
 * 100) and `after`, the value the previous page answered (null after the last page).
 *
 * GET /inbound/statistics/daily: the messages received per UTC day (`from`, `to`: the days
 * holding them, default the 30 days up to now, at most 366), counted as they were committed.
 * UTC days only: the counts are kept per UTC day, so no other zone's days can be answered.
 */
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { FieldErrorList } from '../../domain/errors.js';
import type { InboundMessage } from '../../domain/inbound-message.js';
import { isUuid } from '../../domain/uuid.js';
import { DAY_MS } from '../../domain/stat-counters.js';
import type { InboundDailySeries, InboundMessageDetails, InboundMessageItem, InboundMessagePage } from '../../domain/wire.js';
import type { InboundMessageQuery, InboundMessageService } from '../../inbound/messages.js';
import type { InboundCursor } from '../../store/port/inbound-messages.js';
import { parseDateRange, schemaErrors, text } from '../query-params.js';
import { inboundDailyBody, inboundMessageBody, inboundMessagePageBody } from '../response-schemas.js';

const listQuery = {
  type: 'object',
  additionalProperties: false,
  properties: {
    routeId: { type: 'string', maxLength: 64 },
    channelId: { type: 'string', maxLength: 64 },
    status: { type: 'string', enum: ['received', 'posted', 'failed'] },
    from: { type: 'string', minLength: 1, maxLength: 320 },
    subject: { type: 'string', minLength: 1, maxLength: 256 },
    startDate: { type: 'string', format: 'date-time' },
    endDate: { type: 'string', format: 'date-time' },
    limit: { type: 'integer', minimum: 1, maximum: 500 },
    after: { type: 'string', maxLength: 100 },
  },
} as const;

const dailyQuery = {
  type: 'object',
  additionalProperties: false,
  properties: { channelId: { type: 'string', maxLength: 64 }, from: { type: 'string', format: 'date-time' }, to: { type: 'string', format: 'date-time' } },
} as const;

/** Longest daily series: a leap year of days, as /statistics/daily. */
const MAX_DAYS = 366;

/** The daily query checked for form: without `to`, now; without `from`, 29 days before `to`. */
function parseDaily(q: { channelId?: string; from?: string; to?: string }, errors: FieldErrorList): { channelId?: string; fromMs: number; toMs: number } {
  if (typeof q.channelId === 'string' && !isUuid(q.channelId)) errors.add('/channelId', 'invalid_format', 'must be a UUID');
  const r = parseDateRange({ from: text(q.from), to: text(q.to) }, { from: 'from', to: 'to' }, errors);
  const toMs = r.toMs ?? Math.max(r.fromMs ?? 0, Date.now());
  const fromMs = r.fromMs ?? toMs - 29 * DAY_MS;
  if (fromMs <= toMs && Math.floor(toMs / DAY_MS) - Math.floor(fromMs / DAY_MS) + 1 > MAX_DAYS) errors.add('/from', 'range_too_long', `must be at most ${MAX_DAYS} days before to`);
  errors.throwIfAny('The query has invalid parameters');
  return { channelId: q.channelId, fromMs, toMs };
}

const dateOfDay = (day: number): string => new Date(day * DAY_MS).toISOString().slice(0, 10);

/** The index of an attachment in the payload's `attachments` (its parts are bounded by parseReceived's maxParts). */
const attachmentParams = {
  type: 'object',
  required: ['id', 'index'],
  properties: { id: { type: 'string' }, index: { type: 'integer', minimum: 0, maximum: 100_000 } },
} as const;

interface ListQuery {
  routeId?: string;
  channelId?: string;
  status?: InboundMessageQuery['status'];
  from?: string;
  subject?: string;
  startDate?: string;
  endDate?: string;
  limit?: number;
  after?: string;
}

/** The cursor as the client sees it: `<receivedAt ms>_<id>` of the last message of a page. */
export function cursorText(c: InboundCursor | null): string | null {
  return c === null ? null : `${c.receivedAtMs}_${c.id}`;
}

function parseCursor(raw: string | undefined, errors: FieldErrorList): InboundCursor | undefined {
  if (raw === undefined) return undefined;
  const m = /^(\d{1,15})_(.+)$/.exec(raw);
  if (!m || !isUuid(m[2])) {
    errors.add('/after', 'invalid_format', 'must be the `after` of a previous page');
    return undefined;
  }
  return { receivedAtMs: Number(m[1]), id: m[2].toLowerCase() };
}

/** The query checked for form, every problem reported together (422 validation_failed). */
function parseQuery(q: ListQuery, errors: FieldErrorList): InboundMessageQuery {
  if (typeof q.routeId === 'string' && !isUuid(q.routeId)) errors.add('/routeId', 'invalid_format', 'must be a UUID');
  if (typeof q.channelId === 'string' && !isUuid(q.channelId)) errors.add('/channelId', 'invalid_format', 'must be a UUID');
  const { fromMs, toMs } = parseDateRange({ from: text(q.startDate), to: text(q.endDate) }, { from: 'startDate', to: 'endDate' }, errors);
  const after = parseCursor(text(q.after), errors);
  errors.throwIfAny('The query has invalid parameters');
  return {
    routeId: q.routeId?.toLowerCase(),
    channelId: q.channelId,
    status: q.status,
    from: q.from,
    subject: q.subject,
    startMs: fromMs,
    endMs: toMs,
    limit: q.limit ?? 100,
    after,
  };
}

function itemJson(m: InboundMessage): InboundMessageItem {
  return {
    id: m.id,
    routeId: m.routeId,
    channelId: m.channelId,
    receivedAt: m.receivedAt,
    status: m.status,
    envelope: { mailFrom: m.envelope.mailFrom, rcptTo: [...m.envelope.rcptTo] },
    from: m.from,
    subject: m.subject,
    mailboxHash: m.mailboxHash,
    size: m.size,
    attemptCount: m.attempts.length,
    nextAttemptAt: m.nextAttemptAt,
  };
}

function detailsJson(m: InboundMessage): InboundMessageDetails {
  return { ...itemJson(m), clientAddress: m.clientAddress, helo: m.helo, processedAt: m.processedAt, attempts: m.attempts, auth: m.auth };
}

/** RFC 6266 4.3: the name as an ASCII fallback and in UTF-8 (RFC 8187). */
function disposition(filename: string | null): string {
  if (filename === null) return 'attachment';
  const ascii = filename.replace(/[^\x20-\x7e]|["\\]/g, '_');
  return `attachment; filename="${ascii}"; filename*=UTF-8''${encodeURIComponent(filename)}`;
}

/** A sender's bytes, never rendered on our origin: saved as a file, no type sniffing. */
function sendFile(reply: FastifyReply, o: { contentType: string; filename: string | null; content: Buffer }): FastifyReply {
  return reply
    .header('content-type', o.contentType)
    .header('content-disposition', disposition(o.filename))
    .header('x-content-type-options', 'nosniff')
    .header('content-security-policy', "default-src 'none'; sandbox")
    .send(o.content);
}

export function inboundMessageRoutes(messages: InboundMessageService) {
  return (app: FastifyInstance): void => {
    const idOf = (req: { params: unknown }) => (req.params as { id: string }).id;

    app.get('/inbound/messages', { schema: { querystring: listQuery, response: { 200: inboundMessagePageBody } }, attachValidation: true }, async (req): Promise<InboundMessagePage> => {
      const { results, next } = await messages.list(req.principal, parseQuery(req.query as ListQuery, schemaErrors(req)));
      return { results: results.map(itemJson), after: cursorText(next) };
    });

    app.get('/inbound/statistics/daily', { schema: { querystring: dailyQuery, response: { 200: inboundDailyBody } }, attachValidation: true }, async (req): Promise<InboundDailySeries> => {
      const days = await messages.receivedPerDay(req.principal, parseDaily(req.query as Record<string, string>, schemaErrors(req)));
      return { results: days.map((d) => ({ date: dateOfDay(d.day), received: d.received })) };
    });

    app.get('/inbound/messages/:id', { schema: { response: { 200: inboundMessageBody } } }, async (req) => detailsJson(await messages.visibleTo(req.principal, idOf(req))));

    app.get('/inbound/messages/:id/raw', async (req, reply) => {
      const raw = await messages.raw(req.principal, idOf(req));
      return sendFile(reply, { contentType: 'message/rfc822', filename: `${idOf(req).toLowerCase()}.eml`, content: raw });
    });

    app.post('/inbound/messages/:id/retry', { schema: { response: { 200: inboundMessageBody } } }, async (req) => detailsJson(await messages.retry(req.principal, idOf(req))));

    app.get('/inbound/messages/:id/attachments/:index', { schema: { params: attachmentParams } }, async (req, reply) => {
      const { id, index } = req.params as { id: string; index: number };
      return sendFile(reply, await messages.attachment(req.principal, id, index));
    });
  };
}
