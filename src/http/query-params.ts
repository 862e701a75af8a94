/**
 * Query-string helpers shared by the read endpoints (activity, statistics): scope checks of a
 * channel named in a query, comma lists, date ranges, and collecting schema errors together
 * with the checks made in code so one 422 names every bad parameter.
 */
import type { FastifyRequest } from 'fastify';
import { accessibleChannel } from '../channels/service.js';
import { parseDateTime } from '../domain/date-time.js';
import { FieldErrorList } from '../domain/errors.js';
import type { Principal } from '../domain/types.js';
import type { StorePort } from '../store/port/index.js';
import { isUuid } from '../domain/uuid.js';
import { fieldErrorsFromAjv, type AjvErrorLike } from './problem.js';
import { splitList } from './schemas.js';

const MAX_TAGS = 20;
const TAG = /^[A-Za-z0-9_-]{1,100}$/;

/** A string query value, or undefined (a repeated parameter arrives as an array). */
export function text(v: unknown): string | undefined {
  return typeof v === 'string' ? v : undefined;
}

/** The id of a channel named in a query, if the principal may read it (channels/service.ts accessibleChannel). */
export async function channelInScope(store: Pick<StorePort, 'channels'>, p: Principal, id: string): Promise<string> {
  return (await accessibleChannel(store, p, id)).id;
}

/** Comma list → tags, every one checked (pointer /tags/<i>). */
export function parseTags(raw: string | undefined, errors: FieldErrorList): string[] | undefined {
  const tags = splitList(raw);
  if (!tags || tags.length === 0) return undefined;
  if (tags.length > MAX_TAGS) errors.add('/tags', 'max_items', `must hold at most ${MAX_TAGS} tags`);
  tags.forEach((t, i) => TAG.test(t) || errors.add(`/tags/${i}`, 'invalid_format', 'must be 1 to 100 letters, digits, hyphens or underscores'));
  return tags;
}

export function parseDateRange(q: { from?: string; to?: string }, names: { from: string; to: string }, errors: FieldErrorList): { fromMs?: number; toMs?: number } {
  const fromMs = q.from === undefined ? undefined : instantOf(q.from);
  const toMs = q.to === undefined ? undefined : instantOf(q.to);
  if (fromMs !== undefined && toMs !== undefined && fromMs > toMs) errors.add(`/${names.to}`, 'invalid_range', `must not be before ${names.from}`);
  return { fromMs, toMs };
}

/**
 * The instant of a date-time the schema accepted (domain/date-time.ts, the reader of every
 * date-time input). A leap second (RFC 3339 5.7, 23:59:60 UTC) is read as the last millisecond of
 * its minute: a bound stays in the day and hour it belongs to (Date.parse gave NaN, which made a
 * daily series throw and an event filter match nothing). Undefined only with a schema error.
 */
function instantOf(value: string): number | undefined {
  return parseDateTime(value, 'end-of-minute');
}

/**
 * Routes validate their query with attachValidation, so that schema errors and the checks of
 * comma lists and ids made here are reported together in one 422.
 */
export function schemaErrors(req: FastifyRequest): FieldErrorList {
  const errors = new FieldErrorList();
  const validation = (req.validationError as { validation?: AjvErrorLike[] } | undefined)?.validation;
  if (validation) for (const [pointer, list] of Object.entries(fieldErrorsFromAjv(validation))) for (const e of list) errors.add(pointer, e.code, e.message);
  return errors;
}

/**
 * The `channelIds` filter of list endpoints (comma list of UUIDs, lowercased), narrowed to the
 * key's own channel for a channel-level key: such a key never sees other channels' resources.
 * Bad ids go to `errors` when given (the caller throws them with the schema's), else are thrown.
 */
export function channelIdsFilter(raw: unknown, p: Principal, collect?: FieldErrorList): string[] | undefined {
  let ids = splitList(text(raw));
  // `channelIds=` with nothing in it is no filter, as an empty `tags=` or `eventTypes=` is: a
  // generated client joins an empty array into that, and got an empty list back.
  if (ids?.length === 0) ids = undefined;
  if (ids) {
    const errors = collect ?? new FieldErrorList();
    ids.forEach((id, i) => isUuid(id) || errors.add(`/channelIds/${i}`, 'invalid_format', 'must be a UUID'));
    if (!collect) errors.throwIfAny('The query has invalid parameters');
    ids = ids.map((id) => id.toLowerCase());
  }
  const own = p.channelId;
  if (own) ids = ids ? ids.filter((id) => id === own) : [own];
  return ids;
}
