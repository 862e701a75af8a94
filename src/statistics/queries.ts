/**
 * The statistics reads of the API (/statistics and /activity/statistics): totals and series over
 * the pre-aggregated counters (store port: StatisticsPort), never over events. The scope reaches
 * it checked against the caller (channels/service.ts accessibleChannel).
 */
import { utcDay, type StatTotals } from '../domain/stat-counters.js';
import type { StorePort } from '../store/port/index.js';

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
export function totals(store: StorePort, s: StatisticsScope): Promise<StatTotals> {
  return store.stats.totals({
    ...s,
    fromDay: s.fromMs === undefined ? 0 : utcDay(s.fromMs),
    toDay: s.toMs === undefined ? Number.MAX_SAFE_INTEGER : utcDay(s.toMs),
  });
}

/** One StatTotals per bucket [edgesMs[i], edgesMs[i + 1]) of calendar days (daySeries) or hours (series). */
export function daySeries(store: StorePort, s: StatisticsScope, edgesMs: number[]): Promise<StatTotals[]> {
  return store.stats.daySeries({ ...s, edgesMs });
}

export function hourSeries(store: StorePort, s: StatisticsScope, edgesMs: number[]): Promise<StatTotals[]> {
  return store.stats.series({ ...s, edgesMs });
}
