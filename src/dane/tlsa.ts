/**
 * TLSA records (RFC 6698 2.1): usage(1) selector(1) matching type(1) association data.
 *
 * dns2 has no TLSA (type 52) codec: it hands unknown types over as the raw rdata (a Buffer),
 * which is parsed here. Only what SMTP can use counts (RFC 7672 3.1.3): DANE-TA(2) and
 * DANE-EE(3) with selector Cert(0) or SPKI(1) and matching type Full(0), SHA2-256(1) or
 * SHA2-512(2) (RFC 7218 names). PKIX-TA(0) and PKIX-EE(1) need a trust anchor store that two
 * MTAs do not share, so RFC 7672 3.1.3 makes them "unusable", as are unknown parameters and
 * digests of the wrong length (RFC 7671 4.1: a malformed record is ignored, not fatal).
 */
import { Buffer } from 'node:buffer';

export const TLSA_TYPE = 52;

export const Usage = { PKIX_TA: 0, PKIX_EE: 1, DANE_TA: 2, DANE_EE: 3 } as const;
export const Selector = { CERT: 0, SPKI: 1 } as const;
export const MatchingType = { FULL: 0, SHA256: 1, SHA512: 2 } as const;

export interface TlsaRecord {
  usage: number;
  selector: number;
  matchingType: number;
  data: Buffer;
}

const DIGEST_LENGTH: Record<number, number> = { [MatchingType.SHA256]: 32, [MatchingType.SHA512]: 64 };

/** undefined when the rdata is shorter than the three parameter octets plus one data octet. */
export function parseTlsaRdata(rdata: Buffer): TlsaRecord | undefined {
  if (rdata.length < 4) return undefined;
  return { usage: rdata[0], selector: rdata[1], matchingType: rdata[2], data: Buffer.from(rdata.subarray(3)) };
}

/** RFC 7672 3.1.3: DANE-TA/DANE-EE with known selector and matching type and a digest of the right size. */
export function isUsable(record: TlsaRecord): boolean {
  if (record.usage !== Usage.DANE_TA && record.usage !== Usage.DANE_EE) return false;
  if (record.selector !== Selector.CERT && record.selector !== Selector.SPKI) return false;
  if (record.matchingType === MatchingType.FULL) return record.data.length > 0;
  const expected = DIGEST_LENGTH[record.matchingType];
  return expected !== undefined && record.data.length === expected;
}

/** "3 1 1 ab12…" as in a zone file (RFC 6698 2.2), for reasons and logs. */
export function describeTlsa(record: TlsaRecord): string {
  return `${record.usage} ${record.selector} ${record.matchingType} ${record.data.toString('hex').slice(0, 16)}…`;
}
