import { describe, expect, it } from 'vitest';
import { AddressPolicy } from '../../src/delivery/address-policy.js';

describe('AddressPolicy', () => {
  const production = new AddressPolicy({ allowPrivate: false });

  it.each(['127.0.0.1', '127.1.2.3', '10.1.2.3', '172.16.0.1', '192.168.1.1', '169.254.169.254', '0.0.0.0', '100.64.0.1', '224.0.0.1', '255.255.255.255', '::1', '::', 'fe80::1', 'fd00::1', '::ffff:127.0.0.1', 'ff02::1'])(
    'refuses %s in production',
    (ip) => expect(production.allows(ip)).toBe(false),
  );

  it.each(['8.8.8.8', '142.250.27.26', '2a00:1450:4010:c0e::1a'])('allows the public address %s', (ip) => expect(production.allows(ip)).toBe(true));

  it('allows loopback when delivery.allowPrivate is set (tests), but never a non-address', () => {
    const tests = new AddressPolicy({ allowPrivate: true });
    expect(tests.allows('127.0.0.2')).toBe(true);
    expect(tests.allows('mx.example.test')).toBe(false);
  });
});
