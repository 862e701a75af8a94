/**
 * The statistics reads of the API (/statistics and /activity/statistics): totals and series over
 * the pre-aggregated counters (store port: StatisticsPort), never over events. The scope reaches
 * it checked against the caller (channels/service.ts accessibleChannel). Series go through the
 * node's cache of closed buckets (series-cache.ts).
 */
import { utcDay, type StatTotals } from '../domain/stat-counters.js';
import type { StorePort } from '../store/port/index.js';
import type { SeriesCache, SeriesKind } from './series-cache.js';

export interface StatisticsScope {
  accountId: string;
  /** Only these channels; undefined: every channel of the account. */
  channelIds?: string[];
  /** Only events carrying at least one of these tags. */
  tags?: string[];
  fromMs?: number;
  toMs?: number;
}

export class StatisticsQueries {
  constructor(private readonly deps: { store: Pick<StorePort, 'stats'>; cache: SeriesCache }) {}

  /**
   * Counters are kept per UTC day, so `fromMs` and `toMs` count whole days: every day they touch
   * counts in full. Without `fromMs`, from the first day; without `toMs`, up to the last.
   */
  totals(s: StatisticsScope): Promise<StatTotals> {
    return this.deps.store.stats.totals({
      ...s,
      fromDay: s.fromMs === undefined ? 0 : utcDay(s.fromMs),
      toDay: s.toMs === undefined ? Number.MAX_SAFE_INTEGER : utcDay(s.toMs),
    });
  }

  /** One StatTotals per bucket [edgesMs[i], edgesMs[i + 1]) of calendar days. */
  daySeries(s: StatisticsScope, edgesMs: number[]): Promise<StatTotals[]> {
    return this.series('day', s, edgesMs);
  }

  /** One StatTotals per bucket of hours. */
  hourSeries(s: StatisticsScope, edgesMs: number[]): Promise<StatTotals[]> {
    return this.series('hour', s, edgesMs);
  }

  private series(kind: SeriesKind, s: StatisticsScope, edgesMs: number[]): Promise<StatTotals[]> {
    const { stats } = this.deps.store;
    const scope = { accountId: s.accountId, channelIds: s.channelIds, tags: s.tags };
    return this.deps.cache.read(kind, scope, edgesMs, {
      changes: (accountId) => stats.changes(accountId),
      read: (edges) => (kind === 'day' ? stats.daySeries({ ...scope, edgesMs: edges }) : stats.series({ ...scope, edgesMs: edges })),
    });
  }
}
