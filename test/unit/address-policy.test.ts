/**
 * The address rules shared by delivery (AddressPolicy) and webhooks (WebhookTargets): one
 * address inside every refused range of the IANA special-purpose registries, and addresses just
 * outside them, which are public. Both users are checked with the same table so they cannot drift.
 */
import { describe, expect, it } from 'vitest';
import { AddressPolicy } from '../../src/delivery/address-policy.js';
import { specialRange } from '../../src/domain/special-addresses.js';
import { WebhookTargets } from '../../src/webhooks/targets.js';

/** [address, the registry prefix that refuses it]. */
const REFUSED: ReadonlyArray<readonly [string, string]> = [
  // IPv4 Special-Purpose Address Registry
  ['0.0.0.0', '0.0.0.0/8'],
  ['0.255.255.255', '0.0.0.0/8'],
  ['10.1.2.3', '10.0.0.0/8'],
  ['100.64.0.1', '100.64.0.0/10'],
  ['100.127.255.255', '100.64.0.0/10'],
  ['127.0.0.1', '127.0.0.0/8'],
  ['127.1.2.3', '127.0.0.0/8'],
  ['169.254.169.254', '169.254.0.0/16'],
  ['172.16.0.1', '172.16.0.0/12'],
  ['172.31.255.255', '172.16.0.0/12'],
  ['192.0.0.8', '192.0.0.0/24'],
  ['192.0.0.9', '192.0.0.0/24'],
  ['192.0.0.170', '192.0.0.0/24'],
  ['192.0.2.1', '192.0.2.0/24'],
  ['192.88.99.1', '192.88.99.0/24'],
  ['192.168.1.1', '192.168.0.0/16'],
  ['198.18.0.1', '198.18.0.0/15'],
  ['198.19.255.255', '198.18.0.0/15'],
  ['198.51.100.7', '198.51.100.0/24'],
  ['203.0.113.7', '203.0.113.0/24'],
  ['224.0.0.1', '224.0.0.0/4'],
  ['239.255.255.250', '224.0.0.0/4'],
  ['240.0.0.1', '240.0.0.0/4'],
  ['255.255.255.255', '255.255.255.255/32'],
  // IPv6 Special-Purpose Address Registry, and what leads from IPv6 to any IPv4 address
  ['::', '::/128'],
  ['::1', '::1/128'],
  ['0:0:0:0:0:0:0:1', '::1/128'],
  ['::7f00:1', '::/96'],
  ['::127.0.0.1', '::/96'],
  ['::a9fe:a9fe', '::/96'],
  ['::ffff:127.0.0.1', '::ffff:0:0/96'],
  ['::FFFF:7F00:1', '::ffff:0:0/96'],
  ['::ffff:8.8.8.8', '::ffff:0:0/96'],
  ['64:ff9b::a00:1', '64:ff9b::/96'],
  ['64:ff9b::169.254.169.254', '64:ff9b::/96'],
  ['64:ff9b::808:808', '64:ff9b::/96'],
  ['64:ff9b:1::a00:1', '64:ff9b:1::/48'],
  ['100::1', '100::/64'],
  ['2001::1', '2001::/23'],
  ['2001:0:4136:e378:8000:63bf:3fff:fdd2', '2001::/23'],
  ['2001:2::1', '2001::/23'],
  ['2001:1ff:ffff::1', '2001::/23'],
  ['2001:db8::1', '2001:db8::/32'],
  ['2002:7f00:1::1', '2002::/16'],
  ['2002:c0a8:101::1', '2002::/16'],
  ['3fff::1', '3fff::/20'],
  ['5f00::1', '5f00::/16'],
  ['fc00::1', 'fc00::/7'],
  ['fd00::1', 'fc00::/7'],
  ['fe80::1', 'fe80::/10'],
  ['febf::1', 'fe80::/10'],
  ['fec0::1', 'fec0::/10'],
  ['feff::1', 'fec0::/10'],
  ['ff02::1', 'ff00::/8'],
  // Not allocated for global unicast at all (IANA IPv6 Address Space: reserved by the IETF).
  ['4000::1', '!2000::/3'],
  ['1::1', '!2000::/3'],
  ['e000::1', '!2000::/3'],
];

/** Public addresses, several of them just outside a refused range. */
const PUBLIC = [
  '8.8.8.8',
  '1.1.1.1',
  '142.250.27.26',
  '9.255.255.255',
  '11.0.0.0',
  '100.63.255.255',
  '100.128.0.0',
  '126.255.255.255',
  '128.0.0.0',
  '169.253.255.255',
  '172.15.255.255',
  '172.32.0.0',
  '192.0.1.1',
  '192.0.3.1',
  '192.31.196.1', // AS112 (RFC 7535): globally reachable
  '192.52.193.1', // AMT (RFC 7450): globally reachable
  '192.175.48.1', // AS112 direct delegation (RFC 7534): globally reachable
  '198.17.255.255',
  '198.20.0.0',
  '223.255.255.255',
  '2a00:1450:4010:c0e::1a',
  '2001:4860:4860::8888',
  '2001:200::1', // first address after 2001::/23
  '2001:db7:ffff::1',
  '2001:db9::1',
  '2003::1',
  '2620:4f:8000::1', // AS112 (RFC 7534): globally reachable
  '3ffe:ffff::1',
  '3fff:1000::1',
  '2600::1',
];

const production = new AddressPolicy({ allowPrivate: false });
const strictTargets = new WebhookTargets({ allowHttp: false, allowPrivate: false, resolver: { a: async () => ({ status: 'nxdomain' }), aaaa: async () => ({ status: 'nxdomain' }) } });

describe('special-purpose address ranges', () => {
  it.each(REFUSED)('refuses %s for delivery (%s)', (ip, prefix) => {
    expect(specialRange(ip)?.prefix).toBe(prefix);
    expect(production.allows(ip)).toBe(false);
  });

  it.each(REFUSED)('refuses %s as a webhook target (%s)', async (ip) => {
    const host = ip.includes(':') ? `[${ip}]` : ip;
    expect(await strictTargets.checkUrl(`https://${host}/hook`)).toMatchObject({ code: 'forbidden_address' });
  });

  it.each(PUBLIC)('allows the public address %s for delivery and webhooks', async (ip) => {
    expect(specialRange(ip)).toBeNull();
    expect(production.allows(ip)).toBe(true);
    const host = ip.includes(':') ? `[${ip}]` : ip;
    expect(await strictTargets.checkUrl(`https://${host}/hook`)).toBeNull();
  });

  it('refuses what is not an address, and an address with a zone index', () => {
    expect(production.allows('mx.example.test')).toBe(false);
    expect(production.allows('')).toBe(false);
    expect(production.allows('fe80::1%eth0')).toBe(false);
    expect(specialRange('2a00:1450::1%eth0')).not.toBeNull();
  });

  it('allows loopback when delivery.allowPrivate is set (tests), but never a non-address', () => {
    const tests = new AddressPolicy({ allowPrivate: true });
    expect(tests.allows('127.0.0.2')).toBe(true);
    expect(tests.allows('::ffff:127.0.0.1')).toBe(true);
    expect(tests.allows('mx.example.test')).toBe(false);
  });
});

describe('webhook host names', () => {
  // RFC 6761 6.3: localhost and every name under it are loopback, whatever DNS says; a trailing
  // dot is the same name (RFC 1034 3.1).
  it.each(['localhost', 'localhost.', 'LOCALHOST.', 'api.localhost', 'api.localhost.', 'a.b.localhost..'])('refuses https://%s/ without asking DNS', async (name) => {
    let asked = false;
    const targets = new WebhookTargets({
      allowHttp: false,
      allowPrivate: false,
      resolver: {
        a: async () => ((asked = true), { status: 'ok', records: ['8.8.8.8'], ttl: 60 }),
        aaaa: async () => ((asked = true), { status: 'nodata' }),
      },
    });
    expect(await targets.checkUrl(`https://${name}/hook`)).toMatchObject({ code: 'forbidden_address' });
    expect(asked).toBe(false);
  });

  it('refuses a name whose every address is special, naming the range', async () => {
    const targets = new WebhookTargets({
      allowHttp: false,
      allowPrivate: false,
      resolver: { a: async () => ({ status: 'nxdomain' }), aaaa: async () => ({ status: 'ok', records: ['64:ff9b::a9fe:a9fe', '::7f00:1'], ttl: 60 }) },
    });
    const problem = await targets.checkUrl('https://sneaky.example/hook');
    expect(problem).toMatchObject({ code: 'forbidden_address' });
    expect(problem!.message).toContain('64:ff9b::a9fe:a9fe (IPv4/IPv6 translation, NAT64 (RFC 6052))');
    expect(problem!.message).toContain('::7f00:1 (IPv4-compatible, deprecated (RFC 4291 2.5.5.1))');
  });

  it('accepts a name under localhost when webhooks.allowPrivate is set (tests)', async () => {
    const open = new WebhookTargets({ allowHttp: true, allowPrivate: true });
    expect(await open.resolve('hooks.localhost.')).toEqual({ ok: true, addresses: [{ address: '127.0.0.1', family: 4 }, { address: '::1', family: 6 }] });
  });
});
