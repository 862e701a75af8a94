/**
 * delivery.sources, delivery.pools and delivery.defaultPools (issue 35): read from a file and the
 * environment, and every mistake named in one ConfigError.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config/load.js';
import { resolveSendingIps } from '../../src/domain/sending-ips.js';

let dir: string;
beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'postrider-ips-'));
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

function load(delivery: unknown, env: NodeJS.ProcessEnv = {}) {
  const file = path.join(dir, 'postrider.jsonc');
  fs.writeFileSync(file, JSON.stringify({ hostname: 'mta.example.com', delivery }));
  return loadConfig({ configPath: file, env });
}

function problems(delivery: unknown): string[] {
  try {
    load(delivery);
  } catch (err) {
    if (err instanceof ConfigError) return err.problems;
    throw err;
  }
  throw new Error('expected a ConfigError');
}

const SOURCES = [
  { name: 'ip1', address: '127.0.0.2', ehloName: 'mta1.example.com' },
  { name: 'ip2', address: '::1' },
];

describe('delivery.sources and pools', () => {
  it('are empty by default: one implicit pool whose source is the kernel’s choice', () => {
    const config = loadConfig({ env: {}, overrides: { hostname: 'mta.example.com' } });
    expect(config.delivery.sources).toEqual([]);
    expect(config.delivery.pools).toEqual({});
    expect(config.delivery.defaultPools).toEqual({ transactional: '', broadcast: '' });
    const ips = resolveSendingIps(config.delivery, config.hostname);
    expect(ips.configured).toBe(false);
    expect([...ips.pools.keys()]).toEqual(['default']);
    expect([...ips.sources.values()]).toEqual([{ name: 'kernel', ehloName: 'mta.example.com' }]);
  });

  it('reads sources, pools and default pools; ehloName defaults to hostname; "default" holds every source', () => {
    const config = load({
      sources: SOURCES,
      pools: { tx: [{ source: 'ip1', weight: 3 }, { source: 'ip2', weight: 1 }], bulk: [{ source: 'ip2', weight: 1 }] },
      defaultPools: { transactional: 'tx', broadcast: 'bulk' },
    });
    const ips = resolveSendingIps(config.delivery, config.hostname);
    expect(ips.sources.get('ip2')).toEqual({ name: 'ip2', address: '::1', ehloName: 'mta.example.com' });
    expect(ips.pools.get('default')).toEqual([{ source: 'ip1', weight: 1 }, { source: 'ip2', weight: 1 }]);
    expect(ips.defaultPools).toEqual({ transactional: 'tx', broadcast: 'bulk' });
  });

  it('reads the sources from the environment as JSON', () => {
    const config = loadConfig({ env: { POSTRIDER_DELIVERY_SOURCES: JSON.stringify(SOURCES), POSTRIDER_DELIVERY_DEFAULT_POOLS_BROADCAST: 'default' } });
    expect(config.delivery.sources.map((s) => s.name)).toEqual(['ip1', 'ip2']);
    expect(config.delivery.defaultPools.broadcast).toBe('default');
  });

  it('names every mistake at once', () => {
    const found = problems({
      sources: [...SOURCES, { name: 'ip1', address: '10.0.0.300' }, { name: 'ip3', address: '127.0.0.2', ehloName: 'not a name' }],
      pools: { tx: [{ source: 'ip9', weight: 1 }, { source: 'ip1', weight: 1 }, { source: 'ip1', weight: 2 }], empty: [] },
      defaultPools: { transactional: 'nope', broadcast: 'default' },
    });
    expect(found).toEqual([
      '"delivery.sources" names "ip1" twice',
      '"delivery.sources" source "ip1": address "10.0.0.300" is not an IPv4 or IPv6 address',
      '"delivery.sources" source "ip3": ehloName "not a name" is not a host name',
      '"delivery.sources" binds address 127.0.0.2 twice (one EHLO name per address)',
      '"delivery.pools" pool "tx" names source "ip9", which is not in delivery.sources',
      '"delivery.pools" pool "tx" names source "ip1" twice',
      '"delivery.pools" pool "empty" has no sources',
      '"delivery.defaultPools.transactional" names pool "nope", which is not in delivery.pools',
    ]);
  });

  it('names an IPv6 address with a zone index as no address, rather than failing to start with a TypeError', () => {
    expect(problems({ sources: [{ name: 'ip1', address: 'fe80::1%eth0' }] })).toEqual(['"delivery.sources" source "ip1": address "fe80::1%eth0" is not an IPv4 or IPv6 address']);
  });

  it('reads an IPv4-mapped IPv6 address as the IPv4 address it maps, which reaches IPv4 MX hosts', () => {
    const ips = resolveSendingIps({ sources: [{ name: 'ip1', address: '::FFFF:127.0.0.2' }, { name: 'ip2', address: '::ffff:7f00:3' }], pools: {}, defaultPools: { transactional: '', broadcast: '' } } as never, 'mta.example.com');
    expect(ips.sources.get('ip1')?.address).toBe('127.0.0.2');
    expect(ips.sources.get('ip2')?.address).toBe('127.0.0.3');
    expect(problems({ sources: [{ name: 'ip1', address: '127.0.0.2' }, { name: 'ip2', address: '::ffff:127.0.0.2' }] })).toEqual(['"delivery.sources" binds address 127.0.0.2 twice (one EHLO name per address)']);
  });

  it('refuses a weight that is not a positive integer and unknown fields', () => {
    expect(problems({ sources: SOURCES, pools: { tx: [{ source: 'ip1', weight: 0 }] } })[0]).toMatch(/"delivery\.pools" at \/tx\/0\/weight: must be between 1 and 1000/);
    expect(problems({ sources: SOURCES, pools: { tx: [{ source: 'ip1', weight: 1.5 }] } })[0]).toMatch(/"delivery\.pools" at \/tx\/0\/weight/);
    expect(problems({ sources: [{ name: 'ip1', address: '127.0.0.2', ehlo: 'x' }] })[0]).toMatch(/"delivery\.sources" at \/0\/ehlo: unexpected property/);
    expect(problems({ sources: 'ip1' })[0]).toMatch(/"delivery\.sources" must be a JSON array of objects/);
  });
});
