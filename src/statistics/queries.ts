/**
 * The statistics reads of the API (/statistics and /activity/statistics): totals and series over
 * the pre-aggregated counters (store/stats.ts), never over events. The scope reaches it checked
 * against the caller (channels/service.ts channelFor).
 */
import type { LmdbStore } from '../store/lmdb/engine.js';
import { statisticsDaySeries, statisticsSeries, statisticsTotals, utcDay, type StatTotals } from '../store/lmdb/stats.js';

export interface StatisticsScope {
  accountId: string;
  /** Only these channels; undefined: every channel of the account. */
  channelIds?: string[];
  /** Only events carrying at least one of these tags. */
  tags?: string[];
  fromMs?: number;
  toMs?: number;
}

/**
 * Counters are kept per UTC day, so `fromMs` and `toMs` count whole days: every day they touch
 * counts in full. Without `fromMs`, from the first day; without `toMs`, up to the last.
 */
export function totals(store: LmdbStore, s: StatisticsScope): StatTotals {
  return statisticsTotals(store, {
    ...s,
    fromDay: s.fromMs === undefined ? 0 : utcDay(s.fromMs),
    toDay: s.toMs === undefined ? Number.MAX_SAFE_INTEGER : utcDay(s.toMs),
  });
}

/** One StatTotals per bucket [edgesMs[i], edgesMs[i + 1]) of calendar days (daySeries) or hours (series). */
export function daySeries(store: LmdbStore, s: StatisticsScope, edgesMs: number[]): StatTotals[] {
  return statisticsDaySeries(store, { ...s, edgesMs });
}

export function hourSeries(store: LmdbStore, s: StatisticsScope, edgesMs: number[]): StatTotals[] {
  return statisticsSeries(store, { ...s, edgesMs });
}
