/**
 * The LMDB engine's LmdbStatistics: the port's reads over the pre-aggregated counters
 * (store/port/events.ts, store/lmdb/stats.ts), each one synchronous walk on one snapshot. Without
 * a tag filter they read the rollup (store/lmdb/stats-rollup.ts) once it holds every counter;
 * tag filters, and a store whose rollup is not built yet, read the day and quarter-hour records.
 */
import type { CounterScope, SeriesQuery, StatisticsPort, StatTotals, TotalsQuery } from '../../port/events.js';
import type { Store } from '../env.js';
import { statisticsDaySeries, statisticsSeries, statisticsTotals } from '../stats.js';
import { rollupReady, rollupSeries, rollupTotals } from '../stats-rollup.js';
import { statChanges } from '../stats-changes.js';
import type { StatChanges } from '../../../domain/stat-changes.js';

export class LmdbStatistics implements StatisticsPort {
  constructor(private readonly store: Store) {}

  private rolledUp(q: CounterScope): boolean {
    return (!q.tags || q.tags.length === 0) && rollupReady(this.store);
  }

  async totals(q: TotalsQuery): Promise<StatTotals> {
    return this.rolledUp(q) ? rollupTotals(this.store, q) : statisticsTotals(this.store, q);
  }

  async series(q: SeriesQuery): Promise<StatTotals[]> {
    return this.rolledUp(q) ? rollupSeries(this.store, q, 'h') : statisticsSeries(this.store, q);
  }

  async daySeries(q: SeriesQuery): Promise<StatTotals[]> {
    return this.rolledUp(q) ? rollupSeries(this.store, q, 'd') : statisticsDaySeries(this.store, q);
  }

  async changes(accountId: string): Promise<StatChanges> {
    return statChanges(this.store, accountId);
  }
}
