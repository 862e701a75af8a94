import { useMemo, useState } from 'preact/hooks';
import { api } from '../api';
import { useChannelOptions } from '../components/channel-select';
import { PageHeader } from '../components/page-header';
import { ProblemBanner } from '../components/problem-banner';
import { SeriesChart } from '../components/series-chart';
import { StatTiles } from '../components/stat-tiles';
import { useApi } from '../use-api';
import { COLORS, COUNTERS, pick, utcDate, type MailTypeChoice } from '../stats';
import type { StatPoint, StatSeries, StatTotals } from '../wire';
import { OverviewFilters, type OverviewFilter } from './overview-filters';

/**
 * Totals (GET /statistics/totals) and one point per UTC day (GET /statistics/daily) of the
 * chosen channel (or all), mail type and date range. Both count whole UTC days, so the tiles
 * are the sums of the chart.
 */
export function OverviewPage() {
  const [filter, setFilter] = useState<OverviewFilter>({ channelId: '', mailType: 'all', from: utcDate(29), to: utcDate(0) });
  const channels = useChannelOptions();
  const query = { channelId: filter.channelId || undefined, from: `${filter.from}T00:00:00.000Z`, to: `${filter.to}T23:59:59.999Z` };
  const totals = useApi(() => api.get<StatTotals>('/statistics/totals', query), [filter]);
  const daily = useApi(() => api.get<StatSeries>('/statistics/daily', { ...query, timezone: 'UTC' }), [filter]);
  return (
    <>
      <PageHeader title="Overview" description="Recipients counted per UTC day, from the statistics API." />
      <OverviewFilters value={filter} channels={channels.data?.results ?? []} onChange={setFilter} />
      <ProblemBanner error={channels.error ?? totals.error ?? daily.error} />
      <section aria-labelledby="totals-title">
        <h2 id="totals-title">Totals</h2>
        {totals.data ? <StatTiles items={COUNTERS.map((c) => ({ label: c, value: pick(totals.data!, filter.mailType, c) }))} /> : <p class="muted">Loading…</p>}
      </section>
      <section aria-labelledby="daily-title">
        <h2 id="daily-title">Per day</h2>
        {daily.data ? <DailyChart points={daily.data.results} mailType={filter.mailType} /> : <p class="muted">Loading…</p>}
      </section>
    </>
  );
}

function DailyChart(props: { points: StatPoint[]; mailType: MailTypeChoice }) {
  const timestamps = useMemo(() => props.points.map((p) => Date.parse(p.timestamp)), [props.points]);
  const series = useMemo(
    () => COUNTERS.map((c) => ({ label: c, color: COLORS[c], values: props.points.map((p) => pick(p, props.mailType, c)) })),
    [props.points, props.mailType],
  );
  const empty = series.every((s) => s.values.every((v) => v === 0));
  return (
    <>
      <SeriesChart title={`Daily ${COUNTERS.join(', ')} from ${props.points[0]?.timestamp.slice(0, 10)}`} timestamps={timestamps} series={series} />
      {empty && (
        <p class="muted" data-testid="chart-empty">
          No mail in this range yet. Send a message through <code>POST /send/transactional</code> or SMTP, then reload.
        </p>
      )}
    </>
  );
}
