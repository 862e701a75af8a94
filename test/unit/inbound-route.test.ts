/**
 * The pure rules of inbound routes (domain/inbound-route.ts): the form an address is stored in,
 * the order a recipient's candidates are looked up in, and which recipient is postmaster@ a
 * domain (RFC 5321 4.5.1).
 */
import { describe, expect, it } from 'vitest';
import { matchCandidates, parseRouteAddress, postmasterDomain, routeDomain } from '../../src/domain/inbound-route.js';

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

describe('postmasterDomain', () => {
  it('gives the domain of postmaster@ in any case (RFC 5321 4.5.1)', () => {
    for (const r of ['postmaster@acme-shop.com', 'Postmaster@acme-shop.com', 'POSTMASTER@ACME-SHOP.COM']) expect(postmasterDomain(r), r).toBe('acme-shop.com');
  });

  it('is null for every other local part, plus-addressed postmaster and a bare postmaster included', () => {
    for (const r of ['postmaster+x@acme-shop.com', 'xpostmaster@acme-shop.com', 'postmasters@acme-shop.com', 'abuse@acme-shop.com', 'postmaster', '@acme-shop.com']) {
      expect(postmasterDomain(r), r).toBeNull();
    }
  });
});

describe('routeDomain', () => {
  it('is the domain of a stored address, the catch-all too', () => {
    expect([routeDomain('support@acme-shop.com'), routeDomain('*@xn--bcher-kva.example.org')]).toEqual(['acme-shop.com', 'xn--bcher-kva.example.org']);
  });
});
