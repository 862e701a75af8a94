import { describe, expect, it } from 'vitest';
import { normalizeDomainName } from '../../src/domain/domain-name.js';

describe('normalizeDomainName', () => {
  it.each([
    ['Mail.Acme.COM', 'mail.acme.com'],
    ['acme.com.', 'acme.com'],
    ['münchen.de', 'xn--mnchen-3ya.de'],
    ['XN--MNCHEN-3YA.DE', 'xn--mnchen-3ya.de'],
    ['ＡＣＭＥ.com', 'acme.com'],
    ['a-b--c.co.uk', 'a-b--c.co.uk'],
    [`${'a'.repeat(63)}.com`, `${'a'.repeat(63)}.com`],
    [`${'abcdefghi.'.repeat(25)}com`, `${'abcdefghi.'.repeat(25)}com`], // 253 characters
  ])('accepts %j as %j', (input, name) => {
    expect(normalizeDomainName(input)).toEqual({ ok: true, name });
  });

  it.each([
    ['', 'invalid_format'],
    ['.', 'invalid_format'],
    ['com', 'invalid_format'],
    ['a_b.com', 'invalid_format'],
    ['a..com', 'invalid_format'],
    ['.acme.com', 'invalid_format'],
    ['-a.com', 'invalid_format'],
    ['a-.com', 'invalid_format'],
    [`${'a'.repeat(64)}.com`, 'invalid_format'],
    [`${'abcdefghi.'.repeat(25)}com`.replace('abc', 'abcd'), 'invalid_format'], // 254 characters
    ['10.0.0.1', 'invalid_format'],
    ['a%41.com', 'invalid_format'],
    ['a\u0000b.com', 'invalid_format'],
    ['xn--zz.com', 'invalid_format'],
    ['example.com', 'reserved'],
    ['EXAMPLE.NET.', 'reserved'],
    ['deep.sub.example.org', 'reserved'],
    ['anything.test', 'reserved'],
    ['router.home.arpa', 'reserved'],
    ['abc.onion', 'reserved'],
  ])('refuses %j with %s', (input, code) => {
    const result = normalizeDomainName(input);
    expect(result.ok).toBe(false);
    expect(result).toMatchObject({ code });
  });

  it('does not mistake a name that merely ends like a reserved one for a subdomain of it', () => {
    expect(normalizeDomainName('mytest.com')).toEqual({ ok: true, name: 'mytest.com' });
    expect(normalizeDomainName('notexample.com')).toEqual({ ok: true, name: 'notexample.com' });
  });
});
