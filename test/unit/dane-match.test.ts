import type { X509Certificate } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { MAX_BARE_ANCHORS, matchCertificate } from '../../src/dane/match.js';
import { isUsable, parseTlsaRdata, type TlsaRecord } from '../../src/dane/tlsa.js';
import { DANE_MX, daneCerts, tlsaData } from '../support/dane-certs.js';

/** The association data a server operator would publish for cert (RFC 6698 2.1). */
function tlsa(usage: number, selector: number, matchingType: number, cert: X509Certificate): TlsaRecord {
  return { usage, selector, matchingType, data: tlsaData(selector, matchingType, cert) };
}

describe('DANE matching (RFC 7672 3.1, RFC 7671 5)', () => {
  const { leaf, ca, otherCa } = daneCerts();

  it.each([
    [3, 1, 1],
    [3, 0, 1],
    [3, 1, 2],
    [3, 0, 0],
  ])('DANE-EE %i %i %i matches the leaf, whatever its name', (u, s, m) => {
    const result = matchCertificate([leaf], [tlsa(u, s, m, leaf)], ['some.other.name']);
    expect(result).toMatchObject({ ok: true, how: expect.stringMatching(/^DANE-EE/) });
  });

  it('DANE-EE ignores expiry (RFC 7672 3.1.1)', () => {
    const farFuture = new Date(Date.now() + 10 * 365 * 86_400_000);
    expect(matchCertificate([leaf], [tlsa(3, 1, 1, leaf)], [DANE_MX], farFuture).ok).toBe(true);
  });

  it('a wrong hash does not match', () => {
    const record = tlsa(3, 1, 1, leaf);
    record.data[0] ^= 0xff;
    expect(matchCertificate([leaf], [record], [DANE_MX])).toMatchObject({ ok: false });
  });

  it('DANE-TA 2 0 1 matches a chain up to the CA with the leaf named for the MX host', () => {
    expect(matchCertificate([leaf, ca], [tlsa(2, 0, 1, ca)], [DANE_MX])).toMatchObject({ ok: true, how: expect.stringMatching(/^DANE-TA/) });
  });

  it('DANE-TA needs the leaf name to match a reference identifier (RFC 7672 3.2.2)', () => {
    const result = matchCertificate([leaf, ca], [tlsa(2, 0, 1, ca)], ['mx.elsewhere.test']);
    expect(result).toMatchObject({ ok: false, reason: expect.stringContaining('names none') });
  });

  it('DANE-TA needs the chain to verify up to the trust anchor', () => {
    // otherCa is presented and matches the record, but did not sign the leaf.
    const result = matchCertificate([leaf, otherCa], [tlsa(2, 0, 1, otherCa)], [DANE_MX]);
    expect(result).toMatchObject({ ok: false, reason: expect.stringContaining('not signed') });
  });

  it('DANE-TA does not accept the leaf itself as the trust anchor', () => {
    expect(matchCertificate([leaf], [tlsa(2, 0, 1, leaf)], [DANE_MX]).ok).toBe(false);
  });

  it('DANE-TA checks the leaf validity period', () => {
    const farFuture = new Date(Date.now() + 10 * 365 * 86_400_000);
    expect(matchCertificate([leaf, ca], [tlsa(2, 0, 1, ca)], [DANE_MX], farFuture)).toMatchObject({ ok: false, reason: expect.stringContaining('validity') });
  });

  it('DANE-TA 2 1 0 (full key) authenticates a chain that omits the trust anchor (RFC 7672 3.1.2)', () => {
    expect(matchCertificate([leaf], [tlsa(2, 1, 0, ca)], [DANE_MX]).ok).toBe(true);
    expect(matchCertificate([leaf], [tlsa(2, 1, 0, otherCa)], [DANE_MX]).ok).toBe(false);
  });

  it('PKIX-TA(0) and PKIX-EE(1) are ignored even when they match (RFC 7672 3.1.3)', () => {
    const records = [tlsa(1, 1, 1, leaf), tlsa(0, 0, 1, ca)];
    expect(records.some(isUsable)).toBe(false);
    expect(matchCertificate([leaf, ca], records, [DANE_MX]).ok).toBe(false);
  });

  it('one matching record among others is enough', () => {
    const records = [tlsa(1, 1, 1, leaf), tlsa(3, 1, 1, otherCa), tlsa(2, 0, 1, ca)];
    expect(matchCertificate([leaf, ca], records, [DANE_MX]).ok).toBe(true);
  });

  it('finds the matching record after a thousand that do not, and names only a few when none matches (issue 29)', () => {
    // A signed zone's 64 KiB answer holds about 1,400 "2 1 1" records; each digest of each certificate is made once.
    const noise = Array.from({ length: 1_400 }, (_, i) => ({ usage: 2 + (i % 2), selector: 1, matchingType: 1, data: Buffer.alloc(32, i) }));
    expect(matchCertificate([leaf, ca], [...noise, tlsa(2, 1, 1, ca)], [DANE_MX])).toMatchObject({ ok: true, how: expect.stringMatching(/^DANE-TA 2 1 1/) });
    const none = matchCertificate([leaf], noise.filter((r) => r.usage === 3), [DANE_MX]);
    expect(none).toEqual({ ok: false, reason: expect.stringMatching(/^certificate matches no TLSA record \(3 1 1 [0-9a-f]{16}…, .* and 695 more\)$/) });
  });

  it(`tries at most MAX_BARE_ANCHORS (${MAX_BARE_ANCHORS}) "2 1 0" keys in one match`, () => {
    const others = Array.from({ length: MAX_BARE_ANCHORS }, () => tlsa(2, 1, 0, otherCa));
    expect(matchCertificate([leaf], [...others.slice(1), tlsa(2, 1, 0, ca)], [DANE_MX]).ok).toBe(true);
    // The first reason is the one told: the other key's, which does not sign the chain.
    expect(matchCertificate([leaf], [...others, tlsa(2, 1, 0, ca)], [DANE_MX])).toEqual({ ok: false, reason: expect.stringMatching(/chain not signed by the trust anchor key$/) });
  });

  it('digests of the wrong length and unknown parameters are unusable (RFC 7671 4.1)', () => {
    expect(isUsable({ usage: 3, selector: 1, matchingType: 1, data: Buffer.alloc(20) })).toBe(false);
    expect(isUsable({ usage: 3, selector: 2, matchingType: 1, data: Buffer.alloc(32) })).toBe(false);
    expect(isUsable({ usage: 3, selector: 1, matchingType: 3, data: Buffer.alloc(32) })).toBe(false);
    expect(parseTlsaRdata(Buffer.from([3, 1, 1]))).toBeUndefined();
    expect(parseTlsaRdata(Buffer.from([3, 1, 1, 0xab]))).toMatchObject({ usage: 3, selector: 1, matchingType: 1 });
  });
});
