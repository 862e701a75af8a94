import { describe, expect, it } from 'vitest';
import { reverseName } from '../../src/dns/resolver.js';

describe('reverseName (RFC 1035 3.5, RFC 3596 2.5)', () => {
  it('reverses IPv4 octets under in-addr.arpa and IPv6 nibbles under ip6.arpa', () => {
    expect(reverseName('192.0.2.10')).toBe('10.2.0.192.in-addr.arpa');
    expect(reverseName('2001:db8::1')).toBe(`1.${'0.'.repeat(23)}8.b.d.0.1.0.0.2.ip6.arpa`);
    expect(reverseName('::1')).toBe(`1.${'0.'.repeat(31)}ip6.arpa`);
  });
});
