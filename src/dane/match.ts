/**
 * Matching a presented certificate chain against usable TLSA records (RFC 6698 2.1,
 * RFC 7671 5, RFC 7672 3.1-3.2). chain[0] is the server's own certificate, each next one
 * what the server sent as its issuer (TLS 1.2/1.3 order).
 *
 *  - DANE-EE(3): the leaf's certificate or public key matches. Nothing else is checked: no
 *    name, no expiry, no issuer (RFC 7672 3.1.1, RFC 7671 5.1).
 *  - DANE-TA(2): some certificate above the leaf matches, every certificate from the leaf up
 *    to it is signed by the next (X509Certificate.checkIssued + verify) and every issuer is a
 *    CA; the leaf and the intermediates below the trust anchor are within their validity
 *    (RFC 7672 3.1.2 leaves the trust anchor's own expiry unchecked); and the leaf's name
 *    matches one reference identifier (RFC 7672 3.2.2/3.2.3: subjectAltName DNS, CN only
 *    without any, a wildcard only as the whole left-most label). A "2 1 0" record (the full
 *    public key) may name a trust anchor the server does not send: then the top certificate
 *    of the chain must be signed by that key (RFC 7672 3.1.2).
 */
import { X509Certificate, createHash, createPublicKey, timingSafeEqual, type KeyObject } from 'node:crypto';
import { MatchingType, Selector, Usage, describeTlsa, isUsable, type TlsaRecord } from './tlsa.js';

export type MatchResult = { ok: true; record: TlsaRecord; how: string } | { ok: false; reason: string };

function toX509(cert: X509Certificate | Buffer): X509Certificate {
  return cert instanceof X509Certificate ? cert : new X509Certificate(cert);
}

/** Does one certificate match one record's selector, matching type and data (RFC 6698 2.1.2-2.1.3)? */
export function certificateMatches(cert: X509Certificate, record: TlsaRecord): boolean {
  const selected = record.selector === Selector.CERT ? cert.raw : cert.publicKey.export({ type: 'spki', format: 'der' });
  let value: Buffer;
  if (record.matchingType === MatchingType.FULL) value = selected;
  else if (record.matchingType === MatchingType.SHA256) value = createHash('sha256').update(selected).digest();
  else if (record.matchingType === MatchingType.SHA512) value = createHash('sha512').update(selected).digest();
  else return false;
  return value.length === record.data.length && timingSafeEqual(value, record.data);
}

export function matchCertificate(
  chainIn: readonly (X509Certificate | Buffer)[],
  records: readonly TlsaRecord[],
  names: readonly string[],
  now: Date = new Date(),
): MatchResult {
  const chain = chainIn.map(toX509);
  if (chain.length === 0) return { ok: false, reason: 'no certificate presented' };
  const usable = records.filter(isUsable);
  for (const record of usable.filter((r) => r.usage === Usage.DANE_EE)) {
    if (certificateMatches(chain[0], record)) return { ok: true, record, how: `DANE-EE ${describeTlsa(record)}` };
  }
  const ta = usable.filter((r) => r.usage === Usage.DANE_TA);
  let taReason: string | undefined;
  for (const record of ta) {
    const result = matchTrustAnchor(chain, record, names, now);
    if (result.ok) return result;
    taReason ??= result.reason;
  }
  const tried = usable.map(describeTlsa).join(', ');
  return { ok: false, reason: taReason ?? `certificate matches no TLSA record (${tried || 'none usable'})` };
}

function matchTrustAnchor(chain: X509Certificate[], record: TlsaRecord, names: readonly string[], now: Date): MatchResult {
  const how = `DANE-TA ${describeTlsa(record)}`;
  let top = chain.findIndex((cert, i) => i > 0 && certificateMatches(cert, record));
  let anchorKey: KeyObject | undefined;
  if (top === -1) {
    anchorKey = bareAnchorKey(record);
    if (!anchorKey) return { ok: false, reason: `certificate chain contains no trust anchor matching ${describeTlsa(record)}` };
    top = chain.length - 1;
  }
  const broken = chainBreak(chain, top, now);
  if (broken) return { ok: false, reason: `${how}: ${broken}` };
  if (anchorKey && !chain[top].verify(anchorKey)) {
    return { ok: false, reason: `${how}: chain not signed by the trust anchor key` };
  }
  if (anchorKey && !withinValidity(chain[top], now)) return { ok: false, reason: `${how}: certificate ${top} is outside its validity period` };
  if (!names.some((name) => chain[0].checkHost(name, { subject: 'default', wildcards: true, partialWildcards: false }))) {
    return { ok: false, reason: `${how}: certificate names none of ${names.join(', ')}` };
  }
  return { ok: true, record, how };
}

/** Why chain[0..top] is not a valid chain up to chain[top], or undefined when it is. */
function chainBreak(chain: X509Certificate[], top: number, now: Date): string | undefined {
  for (let i = 0; i < top; i++) {
    const cert = chain[i];
    const issuer = chain[i + 1];
    if (!cert.checkIssued(issuer) || !cert.verify(issuer.publicKey)) return `certificate ${i} is not signed by certificate ${i + 1}`;
    if (!issuer.ca) return `certificate ${i + 1} is not a CA`;
    if (!withinValidity(cert, now)) return `certificate ${i} is outside its validity period`;
  }
  return undefined;
}

/** A "2 1 0" record carries the trust anchor's whole public key, so it can verify a chain that omits it. */
function bareAnchorKey(record: TlsaRecord): KeyObject | undefined {
  if (record.selector !== Selector.SPKI || record.matchingType !== MatchingType.FULL) return undefined;
  try {
    return createPublicKey({ key: record.data, format: 'der', type: 'spki' });
  } catch {
    return undefined;
  }
}

function withinValidity(cert: X509Certificate, now: Date): boolean {
  return now >= new Date(cert.validFrom) && now <= new Date(cert.validTo);
}
