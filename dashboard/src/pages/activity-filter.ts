/**
 * The Activity page's filters: every query parameter of GET /activity/events, kept in the page's
 * URL under the API's own names (so a view can be shared or reloaded, and read as an API call).
 * The page asks for the newest first (order=desc) and always names its page size: the API's
 * own default (100) is not the page's (50).
 */
import { ApiError } from '../api';
import type { EventType } from '../wire';
import { EVENT_TYPES } from './message-types';

export interface ActivityFilter {
  channelId: string;
  messageId: string;
  eventTypes: EventType[];
  recipient: string;
  subject: string;
  /** Comma list, as the API takes it. */
  tags: string;
  mailType: '' | 'transactional' | 'broadcast';
  /** YYYY-MM-DD, whole UTC days. */
  from: string;
  to: string;
  /** Events per page (1 to 500). */
  limit: number;
}

export const DEFAULT_LIMIT = 50;

export const EMPTY_FILTER: ActivityFilter = { channelId: '', messageId: '', eventTypes: [], recipient: '', subject: '', tags: '', mailType: '', from: '', to: '', limit: DEFAULT_LIMIT };

function limitOf(raw: string | null): number {
  const n = Number(raw);
  return Number.isInteger(n) && n >= 1 && n <= 500 ? n : DEFAULT_LIMIT;
}

/** The filter a page URL's query describes (unknown values are left out). */
export function filterFromQuery(q: URLSearchParams): ActivityFilter {
  const types = (q.get('eventTypes') ?? '').split(',').filter((t): t is EventType => (EVENT_TYPES as readonly string[]).includes(t));
  const mailType = q.get('mailType');
  return {
    channelId: q.get('channelId') ?? '',
    messageId: q.get('messageId') ?? '',
    eventTypes: types,
    recipient: q.get('recipient') ?? '',
    subject: q.get('subject') ?? '',
    tags: q.get('tags') ?? '',
    mailType: mailType === 'transactional' || mailType === 'broadcast' ? mailType : '',
    from: (q.get('startDate') ?? '').slice(0, 10),
    to: (q.get('endDate') ?? '').slice(0, 10),
    limit: limitOf(q.get('limit')),
  };
}

/** The query of the page URL for a filter; empty values and the default page size are left out. */
export function pageQuery(f: ActivityFilter): Record<string, string | number | undefined> {
  return { ...filterQuery(f), limit: f.limit === DEFAULT_LIMIT ? undefined : f.limit };
}

/** The query of GET /activity/events for a filter: the newest first, the page size always named. */
export function apiQuery(f: ActivityFilter): Record<string, string | number | undefined> {
  return { ...filterQuery(f), limit: f.limit, order: 'desc' };
}

function filterQuery(f: ActivityFilter): Record<string, string | undefined> {
  return {
    channelId: f.channelId || undefined,
    messageId: f.messageId.trim() || undefined,
    eventTypes: f.eventTypes.length > 0 ? f.eventTypes.join(',') : undefined,
    recipient: f.recipient.trim() || undefined,
    subject: f.subject || undefined,
    tags: f.tags.replace(/\s+/g, '') || undefined,
    mailType: f.mailType || undefined,
    startDate: f.from ? `${f.from}T00:00:00.000Z` : undefined,
    endDate: f.to ? `${f.to}T23:59:59.999Z` : undefined,
  };
}

/**
 * The problem with its per-item pointers folded onto their list ("/tags/2" → "/tags",
 * "/eventTypes/0" → "/eventTypes"), so each message shows beside the one field that has it.
 */
export function foldListErrors(error: unknown): unknown {
  if (!(error instanceof ApiError) || !error.problem.errors) return error;
  const errors: NonNullable<ApiError['problem']['errors']> = {};
  for (const [pointer, list] of Object.entries(error.problem.errors)) {
    const field = pointer.replace(/^(\/(?:tags|eventTypes))\/\d+$/, '$1');
    errors[field] = [...(errors[field] ?? []), ...list];
  }
  return new ApiError({ ...error.problem, errors });
}
