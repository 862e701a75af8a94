/**
 * normalizeDomain skips domainToASCII for names it would return unchanged (address.ts,
 * isPlainHost). The reference below is the function as it was before that shortcut: every
 * name, generated or chosen for the URL standard's corners, must get the same answer from both.
 */
import { domainToASCII } from 'node:url';
import { describe, expect, it } from 'vitest';
import { normalizeDomain, normalizeEmail } from '../../src/domain/address.js';
import { rng } from '../support/random.js';

function reference(domain: string): string | null {
  if (domain.startsWith('[')) return null;
  const ascii = domainToASCII(domain.replace(/\.$/, '')).toLowerCase();
  if (!ascii || ascii.length > 253) return null;
  const labels = ascii.split('.');
  if (labels.length < 2) return null;
  if (!labels.every((l) => /^(?!-)[a-z0-9-]{1,63}(?<!-)$/.test(l))) return null;
  if (/^\d+$/.test(labels[labels.length - 1])) return null;
  return ascii;
}

describe('normalizeDomain', () => {
  it('answers as domainToASCII would for the URL standard’s corners: numbers, hex, A-labels, dots, hyphens', () => {
    const corners = [
      'mail.example.org', 'a.b', 'a.0x10', 'a.0x', 'a.0xg', '0x7f.0.0.1', '1.2.3', '1.2.3.4', '0177.0.0.1', 'a.1', 'a.1.', 'a.1..',
      'a.b.', 'a.b..', 'a..b', '.a.b', 'a.b-', '-a.b', 'ab--cd.org', 'xn--nxasmq6b.com', 'xn--.com', 'xn--zz.com', 'XN--nxasmq6b.com',
      'Mail.Example.Org', 'bücher.de', 'a'.repeat(63) + '.com', 'a'.repeat(64) + '.com', `${'a.'.repeat(126)}com`, `${'ab.'.repeat(84)}com`,
      'a.09', 'a.0x0', 'a.0X1', 'a.b0x1', 'localhost', 'a_b.com', '[127.0.0.1]',
    ];
    for (const d of corners) expect(normalizeDomain(d), d).toBe(reference(d));
  });

  it('answers as domainToASCII would for 20,000 generated names', () => {
    const next = rng(36);
    const pieces = ['a', 'z', 'm', '0', '1', '9', 'x', 'f', '-', '.', '.', 'xn--', '0x', 'A', 'é', 'com', 'org'];
    for (let i = 0; i < 20_000; i++) {
      let d = '';
      const n = 1 + Math.floor(next() * 12);
      for (let k = 0; k < n; k++) d += pieces[Math.floor(next() * pieces.length)];
      expect(normalizeDomain(d), JSON.stringify(d)).toBe(reference(d));
    }
  });

  it('keeps the address checks around it', () => {
    expect(normalizeEmail('user@mail.example.org')).toEqual({ email: 'user@mail.example.org' });
    expect(normalizeEmail('user@Mail.Example.ORG.')).toEqual({ email: 'user@mail.example.org' });
    expect(normalizeEmail('user@a.0x10')).toMatchObject({ problem: { code: 'invalid_format' } });
  });

  it('refuses < and > in a quoted local part, which would reach another mailbox (nodemailer drops them), and keeps other quoted ones', () => {
    expect(normalizeEmail('"<b>x</b>"@example.net')).toEqual({ problem: { code: 'invalid_format', message: 'must not have < or > in its local part' } });
    expect(normalizeEmail('"a>b"@example.net')).toMatchObject({ problem: { code: 'invalid_format' } });
    expect(normalizeEmail('"john doe"@example.net')).toEqual({ email: '"john doe"@example.net' });
  });
});
