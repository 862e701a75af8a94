/**
 * A warming source's progress in GET /ops/sources (under "warmup", held against the OpenAPI
 * document by apiRequest) and in /metrics, from the daemon's own warm-up gate (issue 35).
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { apiRequest, startDaemonWithDns, stopDaemonWithDns, type TestDaemon } from '../support/daemon.js';
import type { TestDns } from '../support/dns-server.js';

const TOKEN = 'ops-warmup-test-token-0123456789';
const today = new Date().toISOString().slice(0, 10);
let d: { t?: TestDaemon; dns?: TestDns } = {};

beforeAll(async () => {
  d = await startDaemonWithDns({
    'metrics.token': TOKEN,
    'delivery.sources': [
      { name: 'new', address: '127.0.0.2', ehloName: 'mta2.sender.test', warmup: { start: today, sites: { yahoo: [10, 20] } } },
      { name: 'old', address: '127.0.0.3', ehloName: 'mta3.sender.test' },
    ],
  });
});

afterAll(() => stopDaemonWithDns(d));

it('shows a warming source’s day of its plan and its caps per provider, and nothing of a warm one', async () => {
  const res = await apiRequest(d.t!.url, () => TOKEN, 'GET', '/ops/sources');
  expect(res.status).toBe(200);
  const [fresh, warm] = res.body.results;
  expect(fresh.warmup).toMatchObject({ start: today, day: 1, days: 30, complete: false });
  expect(fresh.warmup.sites.slice(0, 3)).toEqual([
    { key: 'google', curve: 'google', today: { sent: 0, cap: 50 }, thisHour: { sent: 0, cap: 9 } },
    { key: 'microsoft', curve: 'microsoft', today: { sent: 0, cap: 20 }, thisHour: { sent: 0, cap: 5 } },
    { key: 'yahoo', curve: 'yahoo', today: { sent: 0, cap: 10 }, thisHour: { sent: 0, cap: 5 } },
  ]);
  expect(warm.warmup).toBeUndefined();
});

it('exports the day of the plan and today’s count and cap per provider as gauges', async () => {
  const res = await fetch(`${d.t!.url}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } });
  const text = await res.text();
  expect(text).toContain('postrider_source_warmup_day{source="new"} 1');
  expect(text).toContain('postrider_source_warmup_cap_today{source="new",provider="google"} 50');
  expect(text).toContain('postrider_source_warmup_sent_today{source="new",provider="yahoo"} 0');
  // A warm source has no warm-up gauges (other source gauges, such as its health, it has).
  expect(text).not.toMatch(/postrider_source_warmup_\w+\{source="old"/);
});
