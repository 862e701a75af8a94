/**
 * The statistics series rows of bench/messages.mjs (issue 36), for either engine: the year-long
 * daily series and the 744-hour series, UTC and Asia/Kolkata (+05:30: its days and hours start on
 * a half hour), through the store port (what GET /statistics/daily and /hourly call: the rollup
 * of hours and days), and the same series the way they were read before the rollup (`before`:
 * the quarter-hour and day records alone), so both are measured in the same run under the same
 * load. A row's result names the points and the sent counter they sum, which must agree.
 */
import { ZoneCalendar } from '../../dist/domain/time-zone.js';
import { measureAsync } from './measure.mjs';

const DAY = 86_400_000;
const HOUR = 3_600_000;

/**
 * store: the port's store; before: { daySeries(q), series(q) } reading the old way, or null;
 * accountId, channelId: the account and one of its channels; endMs: the end of the data.
 */
export async function seriesRows({ store, before, accountId, channelId, endMs, iterations, label = '' }) {
  const yearFrom = endMs - 365 * DAY;
  const days = (zone) => ZoneCalendar.of(zone).dayEdges(yearFrom, endMs);
  // 744 hours ending with the hour holding endMs; Kolkata's start at :30 UTC.
  const hours = (offsetMs) => Array.from({ length: 745 }, (_, i) => (Math.floor(endMs / HOUR) - 743 + i) * HOUR + offsetMs);
  const sum = (points) => `${points.length} points, sent ${points.reduce((n, p) => n + p.transactional.sent + p.broadcast.sent, 0)}`;
  const cases = [
    ['daily, 366 days, UTC, all channels', 'daySeries', { edgesMs: days('UTC') }, true],
    ['daily, 366 days, Asia/Kolkata, all channels', 'daySeries', { edgesMs: days('Asia/Kolkata') }, true],
    ['daily, 366 days, Asia/Kolkata, one channel', 'daySeries', { edgesMs: days('Asia/Kolkata'), channelIds: [channelId] }, true],
    ['daily, 366 days, Europe/Berlin, all channels', 'daySeries', { edgesMs: days('Europe/Berlin') }, false],
    ['daily, 366 days, UTC, tags=vip,promo (tag records, no rollup)', 'daySeries', { edgesMs: days('UTC'), tags: ['vip', 'promo'] }, false],
    ['hourly, 744 hours, UTC, all channels', 'series', { edgesMs: hours(0) }, true],
    ['hourly, 744 hours, Asia/Kolkata (:30 UTC), all channels', 'series', { edgesMs: hours(HOUR / 2) }, true],
    ['hourly, 744 hours, UTC, one channel', 'series', { edgesMs: hours(0), channelIds: [channelId] }, false],
  ];
  const rows = [];
  for (const [name, verb, q, compare] of cases) {
    const query = { accountId, ...q };
    rows.push(await measureAsync(`${label}${name}`, async () => sum(await store.stats[verb](query)), iterations));
    if (before && compare) rows.push(await measureAsync(`${label}${name}, before (quarter hours and days)`, async () => sum(await before[verb](query)), Math.min(iterations, 20)));
  }
  return rows;
}
