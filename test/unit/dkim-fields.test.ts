import { generateCanonicalizedHeader } from 'mailauth/lib/dkim/header/index.js';
import tools from 'mailauth/lib/tools.js';
import { describe, expect, it } from 'vitest';
import { canonicalHeader, plainTags, signatureField, type SignatureTags } from '../../src/workers/dkim-fields.js';
import { SIGNED_HEADERS } from '../../src/workers/dkim.js';

let seed = 11;
const next = (n: number): number => (seed = (seed * 1103515245 + 12345) % 2 ** 31) % n;
const pick = <T,>(list: readonly T[]): T => list[next(list.length)]!;

// Field lines with the relaxed form's edge cases: folding, tabs, space runs, trailing spaces, 8-bit bytes.
const LINES = [
  'From: Shop <a@example.com>', 'To: x@example.org,\r\n y@example.org', 'Subject:  spaced \t out  ', 'Subject: =?utf-8?Q?Gr=C3=BC=C3=9Fe?=',
  'Date: Tue, 02 Jan 2024 03:04:05 +0000', 'Message-ID: <m@example.com>', 'Content-Type: multipart/alternative;\r\n boundary="--_NmP-1-Part_1"',
  'List-Unsubscribe: <https://example.com/u?t=' + 'z'.repeat(120) + '>', 'X-Latin1: caf\u00e9 \u00a0 nbsp',
];

function tags(): SignatureTags {
  const names = Array.from({ length: 1 + next(14) }, () => pick(SIGNED_HEADERS));
  return {
    a: pick(['rsa-sha256', 'ed25519-sha256']),
    c: 'relaxed/relaxed',
    d: pick(['example.com', 'shop-bench-postrider.com', `${'sub.'.repeat(next(20))}example.org`, 'x'.repeat(1 + next(90))]),
    s: pick(['s1', 'sel2024', 'k'.repeat(1 + next(80))]),
    h: names.join(': '),
    t: 1_700_000_000 + next(100_000_000),
    bh: Buffer.from(String(next(1e9))).toString('base64').padEnd(44, 'A'),
  };
}

describe('DKIM-Signature field and signed data', () => {
  it("are mailauth's bytes for 500 generated tag sets, field lines and signatures", () => {
    for (let i = 0; i < 500; i++) {
      const t = tags();
      const lines = { keys: t.h, headers: Array.from({ length: next(8) }, () => ({ key: null, casedKey: undefined, line: Buffer.from(pick(LINES), 'binary') })) };
      const theirs = generateCanonicalizedHeader('DKIM', lines, {
        signingDomain: t.d, selector: t.s, algorithm: t.a, canonicalization: t.c, bodyHash: t.bh, signTime: new Date(t.t * 1000 + next(1000)),
      });
      expect(plainTags(t)).toBe(true);
      expect(canonicalHeader(lines, t).toString('binary'), `case ${i}`).toBe(theirs.canonicalizedHeader.toString('binary'));
      const b = Buffer.from(Array.from({ length: pick([64, 256, 512]) }, () => next(256))).toString('base64');
      expect(signatureField(t, b), `case ${i}`).toBe(tools.formatSignatureHeaderLine('DKIM', { ...theirs.dkimHeaderOpts, b }, true));
    }
  });

  it('leaves a non-ASCII d= or s= to mailauth (which writes it as an A-label)', () => {
    expect(plainTags({ ...tags(), d: 'bücher.example' })).toBe(false);
    expect(plainTags({ ...tags(), s: 'sélecteur' })).toBe(false);
    expect(plainTags({ ...tags(), d: 'two words.example' })).toBe(false);
  });
});
