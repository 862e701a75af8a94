/**
 * GET /statistics/totals (spec 4.15, 2.9), /statistics/daily and /statistics/hourly
 * (api-surface), each also under /activity/statistics/ where the SDKs call them. Answers come
 * from pre-aggregated counters (store/stats.ts), never from events.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { FieldErrorList } from '../../domain/errors.js';
import type { Principal } from '../../domain/types.js';
import { ZoneCalendar } from '../../domain/time-zone.js';
import type { StorePort } from '../../store/port/index.js';
import type { StatTotals } from '../../store/port/events.js';
import type { StatisticsQueries, StatisticsScope } from '../../statistics/queries.js';
import type { HttpContext, RouteModule } from '../server.js';
import { isUuid } from '../../domain/uuid.js';
import { channelInScope, parseDateRange, parseTags, schemaErrors, text } from '../query-params.js';
import type { StatSeries, StatTotals as StatTotalsJson } from '../../domain/wire.js';

const HOUR_MS = 3_600_000;
/** Longest series: one year of days (a leap year), 31 days of hours. */
export const MAX_DAILY_POINTS = 366;
export const MAX_HOURLY_POINTS = 31 * 24;

const baseProperties = {
  channelId: { type: 'string', maxLength: 64 },
  from: { type: 'string', format: 'date-time' },
  to: { type: 'string', format: 'date-time' },
  tags: { type: 'string', maxLength: 2_500 },
} as const;

const totalsQuery = { type: 'object', additionalProperties: false, properties: baseProperties } as const;
const hourlyQuery = totalsQuery;
const dailyQuery = {
  type: 'object',
  additionalProperties: false,
  properties: { ...baseProperties, timezone: { type: 'string', minLength: 1, maxLength: 64 } },
} as const;

interface StatsQuery {
  channelId?: string;
  from?: string;
  to?: string;
  tags?: string;
  timezone?: string;
}

/** The checks every statistics query shares; `more` adds its own errors before the one 422. */
async function parseScope(store: StorePort, req: FastifyRequest, more?: (q: StatsQuery, errors: FieldErrorList, range: { fromMs?: number; toMs?: number }) => void): Promise<StatisticsScope> {
  const q = req.query as StatsQuery;
  const p: Principal = req.principal;
  const errors = schemaErrors(req);
  if (typeof q.channelId === 'string' && !isUuid(q.channelId)) errors.add('/channelId', 'invalid_format', 'must be a UUID');
  const tags = parseTags(text(q.tags), errors);
  const range = parseDateRange({ from: text(q.from), to: text(q.to) }, { from: 'from', to: 'to' }, errors);
  more?.(q, errors, range);
  errors.throwIfAny('The query has invalid parameters');
  const channelId = q.channelId !== undefined ? await channelInScope(store, p, q.channelId) : p.channelId;
  return { accountId: p.accountId, channelIds: channelId ? [channelId] : undefined, tags, ...range };
}

/** Series items: the bucket's first instant and its counters. */
function seriesAnswer(edges: number[], points: StatTotals[]): StatSeries {
  return { results: points.map((t, i) => ({ timestamp: new Date(edges[i]).toISOString(), transactional: t.transactional, broadcast: t.broadcast })) };
}

/**
 * A series range: without `to`, now; without `from`, `defaultFrom(to)`. Too many points is a 422
 * on /from (the bound moves the start, which is what a caller would shorten).
 */
function seriesRange(r: { fromMs?: number; toMs?: number }, defaultFrom: (toMs: number) => number): { fromMs: number; toMs: number } {
  const toMs = r.toMs ?? (r.fromMs !== undefined ? Math.max(r.fromMs, Date.now()) : Date.now());
  return { fromMs: r.fromMs ?? defaultFrom(toMs), toMs };
}

/** The default daily range starts 29 calendar days before the day holding `to` (30 points, whatever clock changes lie between). */
const DEFAULT_DAYS_BEFORE = 29;
const lastDayHours = (toMs: number) => toMs - 23 * HOUR_MS;

export const statisticsRoutes = (queries: StatisticsQueries): RouteModule => (app: FastifyInstance, { store }: HttpContext): void => {
  /**
   * Counters are kept per UTC day, so `from` and `to` count whole days: every day they touch
   * counts in full. Without `from`, from the first day; without `to`, up to the last.
   */
  const totals = async (req: FastifyRequest): Promise<StatTotalsJson> => queries.totals(await parseScope(store, req));

  /**
   * One point per calendar day of `timezone` (default UTC) from the day holding `from` to the
   * day holding `to`; default range the 30 days up to now. Days are that zone's days: 23 or 25
   * hours on daylight-saving changes.
   */
  const daily = async (req: FastifyRequest): Promise<StatSeries> => {
    // One calendar (one Intl formatter, the costly part) for the whole request.
    let calendar = null as ZoneCalendar | null;
    // A `to` the schema refused (its 422 comes after this check) is NaN: no calendar day holds it.
    const range = (r: { fromMs?: number; toMs?: number }, cal: ZoneCalendar) =>
      seriesRange(r, (to) => (Number.isFinite(to) ? cal.dayStartBefore(to, DEFAULT_DAYS_BEFORE) : to));
    const s = await parseScope(store, req, (q, errors, r) => {
      calendar = ZoneCalendar.of(typeof q.timezone === 'string' ? q.timezone : 'UTC');
      if (!calendar) {
        errors.add('/timezone', 'invalid_value', 'must be an IANA time zone name, such as Europe/Berlin');
        return;
      }
      const { fromMs, toMs } = range(r, calendar);
      if (fromMs <= toMs && calendar.dayCount(fromMs, toMs) > MAX_DAILY_POINTS) errors.add('/from', 'range_too_long', `must be at most ${MAX_DAILY_POINTS} days before to`);
    });
    const { fromMs, toMs } = range(s, calendar!);
    const edges = calendar!.dayEdges(fromMs, toMs);
    return seriesAnswer(edges, await queries.daySeries(s, edges));
  };

  /** One point per UTC hour from the hour holding `from` to the hour holding `to`; default the last 24. */
  const hourly = async (req: FastifyRequest): Promise<StatSeries> => {
    const hours = (r: { fromMs: number; toMs: number }) => Math.floor(r.toMs / HOUR_MS) - Math.floor(r.fromMs / HOUR_MS) + 1;
    const s = await parseScope(store, req, (_q, errors, r) => {
      const range = seriesRange(r, lastDayHours);
      if (range.fromMs <= range.toMs && hours(range) > MAX_HOURLY_POINTS) errors.add('/from', 'range_too_long', `must be at most ${MAX_HOURLY_POINTS} hours before to`);
    });
    const range = seriesRange(s, lastDayHours);
    const first = Math.floor(range.fromMs / HOUR_MS);
    const edges = Array.from({ length: hours(range) + 1 }, (_, i) => (first + i) * HOUR_MS);
    return seriesAnswer(edges, await queries.hourSeries(s, edges));
  };

  for (const prefix of ['/statistics', '/activity/statistics']) {
    app.get(`${prefix}/totals`, { schema: { querystring: totalsQuery }, attachValidation: true }, totals);
    app.get(`${prefix}/daily`, { schema: { querystring: dailyQuery }, attachValidation: true }, daily);
    app.get(`${prefix}/hourly`, { schema: { querystring: hourlyQuery }, attachValidation: true }, hourly);
  }
};
