/**
 * delivery.sources[].warmup (issue 35): read with its source, and every mistake of every plan
 * named in one ConfigError beside the sources' other problems.
 */
import { expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config/load.js';
import { resolveSendingIps } from '../../src/domain/sending-ips.js';

function load(sources: unknown) {
  return loadConfig({ env: { POSTRIDER_DELIVERY_SOURCES: JSON.stringify(sources) }, overrides: { hostname: 'mta.example.com' } });
}

it('reads a source’s warm-up plan', () => {
  const warmup = { start: '2026-12-01', curve: [50, 100, 200], sites: { microsoft: [20, 40], other: [100] } };
  const config = load([{ name: 'new', address: '127.0.0.2', warmup }, { name: 'old', address: '127.0.0.3' }]);
  const ips = resolveSendingIps(config.delivery, config.hostname);
  expect(ips.sources.get('new')!.warmup).toEqual(warmup);
  expect(ips.sources.get('old')!.warmup).toBeUndefined();
});

it('names every mistake of every plan at once', () => {
  let problems: string[] = [];
  try {
    load([
      { name: 'a', address: '127.0.0.2', warmup: { start: '2026-02-30', curve: [50, 40, 0, 1.5] } },
      { name: 'b', address: '127.0.0.300', warmup: { start: 'tomorrow', curve: [], sites: { gmail: [1], yahoo: [5, 3] } } },
    ]);
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    problems = err.problems;
  }
  expect(problems).toEqual([
    '"delivery.sources" source "a": warmup.start "2026-02-30" is not a date (YYYY-MM-DD)',
    '"delivery.sources" source "a": warmup.curve[1] is 40, less than the day before (50): a curve never decreases',
    '"delivery.sources" source "a": warmup.curve[2] is 0: messages a day are a positive integer',
    '"delivery.sources" source "a": warmup.curve[3] is 1.5: messages a day are a positive integer',
    '"delivery.sources" source "b": address "127.0.0.300" is not an IPv4 or IPv6 address',
    '"delivery.sources" source "b": warmup.start "tomorrow" is not a date (YYYY-MM-DD)',
    '"delivery.sources" source "b": warmup.curve is empty (leave it out for the built-in curve)',
    '"delivery.sources" source "b": warmup.sites names "gmail", which is not a provider (google, microsoft, yahoo, apple, united-internet, mail-ru, yandex, proton, fastmail, comcast, other)',
    '"delivery.sources" source "b": warmup.sites.yahoo[1] is 3, less than the day before (5): a curve never decreases',
  ]);
});

it('refuses a plan with keys it does not know', () => {
  expect(() => load([{ name: 'a', address: '127.0.0.2', warmup: { start: '2026-12-01', days: 3 } }])).toThrow(/delivery\.sources/);
});
