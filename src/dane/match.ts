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

/**
 * "2 1 0" records tried per match at most. Each costs a key import and a signature check, and a
 * signed zone can publish hundreds in one 64 KiB answer; real sets carry one or two (a key and
 * its successor during a rollover, RFC 7671 8.1). Beyond the limit they are not tried.
 */
export const MAX_BARE_ANCHORS = 8;

/**
 * What a certificate's selector and matching type give (RFC 6698 2.1.2-2.1.3), computed once per
 * certificate and combination within one match: a TLSA answer can hold over a thousand records,
 * and exporting and hashing the key again for each of them took about a second per TLS session.
 */
class Associations {
  private readonly values = new Map<X509Certificate, Map<number, Buffer | null>>();

  matches(cert: X509Certificate, record: TlsaRecord): boolean {
    const value = this.of(cert, record.selector, record.matchingType);
    return value !== null && value.length === record.data.length && timingSafeEqual(value, record.data);
  }

  private of(cert: X509Certificate, selector: number, matchingType: number): Buffer | null {
    let byCert = this.values.get(cert);
    if (!byCert) this.values.set(cert, (byCert = new Map()));
    const key = selector * 256 + matchingType;
    let value = byCert.get(key);
    if (value === undefined) byCert.set(key, (value = association(cert, selector, matchingType)));
    return value;
  }
}

function association(cert: X509Certificate, selector: number, matchingType: number): Buffer | null {
  const selected = selector === Selector.CERT ? cert.raw : cert.publicKey.export({ type: 'spki', format: 'der' });
  if (matchingType === MatchingType.FULL) return selected;
  if (matchingType === MatchingType.SHA256) return createHash('sha256').update(selected).digest();
  if (matchingType === MatchingType.SHA512) return createHash('sha512').update(selected).digest();
  return null;
}

/** Does one certificate match one record's selector, matching type and data (RFC 6698 2.1.2-2.1.3)? */
export function certificateMatches(cert: X509Certificate, record: TlsaRecord): boolean {
  return new Associations().matches(cert, record);
}

/** The state of one match: the certificates' associations, and each chain check made (by top). */
interface MatchContext {
  chain: X509Certificate[];
  names: readonly string[];
  now: Date;
  associations: Associations;
  breaks: Map<number, string | undefined>;
  bareAnchorsTried: number;
}

export function matchCertificate(
  chainIn: readonly (X509Certificate | Buffer)[],
  records: readonly TlsaRecord[],
  names: readonly string[],
  now: Date = new Date(),
): MatchResult {
  const chain = chainIn.map(toX509);
  if (chain.length === 0) return { ok: false, reason: 'no certificate presented' };
  const ctx: MatchContext = { chain, names, now, associations: new Associations(), breaks: new Map(), bareAnchorsTried: 0 };
  const usable = records.filter(isUsable);
  for (const record of usable.filter((r) => r.usage === Usage.DANE_EE)) {
    if (ctx.associations.matches(chain[0], record)) return { ok: true, record, how: `DANE-EE ${describeTlsa(record)}` };
  }
  const ta = usable.filter((r) => r.usage === Usage.DANE_TA);
  let taReason: string | undefined;
  for (const record of ta) {
    const result = matchTrustAnchor(ctx, record);
    if (result.ok) return result;
    taReason ??= result.reason;
  }
  // The reason names a few records; an answer can hold over a thousand.
  const tried = usable.slice(0, 5).map(describeTlsa).join(', ') + (usable.length > 5 ? ` and ${usable.length - 5} more` : '');
  return { ok: false, reason: taReason ?? `certificate matches no TLSA record (${tried || 'none usable'})` };
}

function matchTrustAnchor(ctx: MatchContext, record: TlsaRecord): MatchResult {
  const { chain, names, now } = ctx;
  const how = `DANE-TA ${describeTlsa(record)}`;
  let top = chain.findIndex((cert, i) => i > 0 && ctx.associations.matches(cert, record));
  let anchorKey: KeyObject | undefined;
  if (top === -1) {
    anchorKey = bareAnchorKey(ctx, record);
    if (!anchorKey) return { ok: false, reason: `certificate chain contains no trust anchor matching ${describeTlsa(record)}` };
    top = chain.length - 1;
  }
  if (!ctx.breaks.has(top)) ctx.breaks.set(top, chainBreak(chain, top, now));
  const broken = ctx.breaks.get(top);
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

/**
 * A "2 1 0" record carries the trust anchor's whole public key, so it can verify a chain that
 * omits it. Only the first MAX_BARE_ANCHORS of a match are read, those that fail to parse included.
 */
function bareAnchorKey(ctx: MatchContext, record: TlsaRecord): KeyObject | undefined {
  if (record.selector !== Selector.SPKI || record.matchingType !== MatchingType.FULL) return undefined;
  if (ctx.bareAnchorsTried >= MAX_BARE_ANCHORS) return undefined;
  ctx.bareAnchorsTried++;
  try {
    return createPublicKey({ key: record.data, format: 'der', type: 'spki' });
  } catch {
    return undefined;
  }
}

function withinValidity(cert: X509Certificate, now: Date): boolean {
  return now >= new Date(cert.validFrom) && now <= new Date(cert.validTo);
}
