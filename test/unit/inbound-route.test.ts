/**
 * The pure rules of inbound routes (domain/inbound-route.ts): the form an address is stored in,
 * and the order a recipient's candidates are looked up in.
 */
import { describe, expect, it } from 'vitest';
import { matchCandidates, parseRouteAddress } from '../../src/domain/inbound-route.js';

describe('parseRouteAddress', () => {
  it('lower-cases a plain address and gives its domain as A-labels', () => {
    expect(parseRouteAddress('Support@Bücher.example.org')).toEqual({ address: 'support@xn--bcher-kva.example.org', domain: 'xn--bcher-kva.example.org' });
  });

  it('takes *@domain as the catch-all', () => {
    expect(parseRouteAddress('*@Acme-Shop.com.')).toEqual({ address: '*@acme-shop.com', domain: 'acme-shop.com' });
  });

  it('refuses quoted local parts, routing syntax and what is no address', () => {
    for (const raw of ['"a b"@acme-shop.com', 'a%b@acme-shop.com', 'a!b@acme-shop.com', 'acme-shop.com', '@acme-shop.com', '*@localhost', 'a@[127.0.0.1]']) {
      expect(parseRouteAddress(raw), raw).toMatchObject({ problem: { code: 'invalid_format' } });
    }
  });
});

describe('matchCandidates', () => {
  it('looks up the exact address, then the catch-all, without a +hash', () => {
    expect(matchCandidates('Ann@Acme-Shop.com')).toEqual([
      { address: 'ann@acme-shop.com', mailboxHash: null },
      { address: '*@acme-shop.com', mailboxHash: null },
    ]);
  });

  it('with plus-addressing adds the address without the hash, which keeps its case, before the catch-all', () => {
    expect(matchCandidates('Support+Ticket-4711@acme-shop.com')).toEqual([
      { address: 'support+ticket-4711@acme-shop.com', mailboxHash: null },
      { address: 'support@acme-shop.com', mailboxHash: 'Ticket-4711' },
      { address: '*@acme-shop.com', mailboxHash: 'Ticket-4711' },
    ]);
  });

  it('splits at the first + only, and never at a leading one', () => {
    expect(matchCandidates('a+b+c@x.org')[1]).toEqual({ address: 'a@x.org', mailboxHash: 'b+c' });
    expect(matchCandidates('+a@x.org').map((c) => c.address)).toEqual(['+a@x.org', '*@x.org']);
  });
});
