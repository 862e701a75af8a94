/** GET /statistics/totals: spec 4.15, 2.9. Counters per UTC day (store/stats.ts). */
import type { FastifyInstance } from 'fastify';
import { statisticsTotals, utcDay } from '../../store/stats.js';
import type { HttpContext } from '../server.js';
import { isUuid } from '../auth.js';
import { channelInScope, parseDateRange, parseTags, schemaErrors, text } from '../query-params.js';

const totalsQuery = {
  type: 'object',
  additionalProperties: false,
  properties: {
    channelId: { type: 'string', maxLength: 64 },
    from: { type: 'string', format: 'date-time' },
    to: { type: 'string', format: 'date-time' },
    tags: { type: 'string', maxLength: 2_500 },
  },
} as const;

interface TotalsQuery {
  channelId?: string;
  from?: string;
  to?: string;
  tags?: string;
}

export function statisticsRoutes(app: FastifyInstance, { store }: HttpContext): void {
  /**
   * Counters are kept per UTC day, so `from` and `to` count whole days: every day they touch
   * counts in full. Without `from`, from the first day; without `to`, up to the last.
   */
  app.get('/statistics/totals', { schema: { querystring: totalsQuery }, attachValidation: true }, async (req) => {
    const q = req.query as TotalsQuery;
    const p = req.principal;
    const errors = schemaErrors(req);
    if (typeof q.channelId === 'string' && !isUuid(q.channelId)) errors.add('/channelId', 'invalid_format', 'must be a UUID');
    const tags = parseTags(text(q.tags), errors);
    const { fromMs, toMs } = parseDateRange({ from: text(q.from), to: text(q.to) }, { from: 'from', to: 'to' }, errors);
    errors.throwIfAny('The query has invalid parameters');
    const channelId = q.channelId !== undefined ? channelInScope(store, p, q.channelId) : p.channelId;
    return statisticsTotals(store, {
      accountId: p.accountId,
      channelIds: channelId ? [channelId] : undefined,
      fromDay: fromMs === undefined ? 0 : utcDay(fromMs),
      toDay: toMs === undefined ? Number.MAX_SAFE_INTEGER : utcDay(toMs),
      tags,
    });
  });
}
