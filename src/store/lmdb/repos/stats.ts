/**
 * The LMDB engine's LmdbStatistics: the port's reads over the pre-aggregated counters
 * (store/port/events.ts, store/lmdb/stats.ts), each one synchronous walk on one snapshot.
 */
import type { SeriesQuery, StatisticsPort, StatTotals, TotalsQuery } from '../../port/events.js';
import type { Store } from '../env.js';
import { statisticsDaySeries, statisticsSeries, statisticsTotals } from '../stats.js';

export class LmdbStatistics implements StatisticsPort {
  constructor(private readonly store: Store) {}

  async totals(q: TotalsQuery): Promise<StatTotals> {
    return statisticsTotals(this.store, q);
  }

  async series(q: SeriesQuery): Promise<StatTotals[]> {
    return statisticsSeries(this.store, q);
  }

  async daySeries(q: SeriesQuery): Promise<StatTotals[]> {
    return statisticsDaySeries(this.store, q);
  }
}
