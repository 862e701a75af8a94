/**
 * What a TLSA lookup for one MX host means for the connection to it (RFC 7672 2.2, 3.1).
 * Kept apart from the lookup so matching and delivery can use the type without the DNS client.
 */
import type { TlsaRecord } from './tlsa.js';

export type DaneResult =
  /** dns.dnssecValidating is false: the AD bit means nothing, DANE is off (as Postfix without smtp_dns_support_level=dnssec). */
  | { kind: 'off'; reason: string }
  /** The address or TLSA answer was not validated (unsigned zone): DANE does not apply (RFC 7672 2.2). */
  | { kind: 'insecure'; reason: string }
  /** Validated denial of TLSA records (NXDOMAIN/NODATA with AD): DANE does not apply. */
  | { kind: 'no-tlsa'; reason: string }
  /**
   * A validated TLSA RRset without one usable record (only PKIX-TA/PKIX-EE, unknown parameters,
   * malformed digests). RFC 7672 3.1: the TLSA RRset still says the server does TLS, so TLS is
   * mandatory (no plaintext fallback), but nothing can authenticate the server: "encrypt" in
   * Postfix's terms.
   */
  | { kind: 'unusable'; reason: string; records: TlsaRecord[] }
  /**
   * Usable records: TLS is mandatory and the server must match one of them (RFC 7672 2.2).
   * names: the reference identifiers for DANE-TA (RFC 7672 3.2.2): the TLSA base domain and,
   * when an address CNAME led to it, the MX host name as well.
   */
  | { kind: 'dane'; records: TlsaRecord[]; tlsaBase: string; names: string[] }
  /**
   * The TLSA (or address) lookup failed in a zone that may be signed: SERVFAIL (bogus or
   * indeterminate), timeout, REFUSED. RFC 7672 2.2: such a server is treated as unreachable —
   * try the next MX, and defer when none is left; never deliver to it without TLSA.
   */
  | { kind: 'failed'; reason: string };

export type TlsRequirement = 'opportunistic' | 'encrypt' | 'authenticate' | 'skip-mx';

/**
 * The one decision delivery takes from a result:
 *  - opportunistic: try STARTTLS, fall back to plaintext as without DANE;
 *  - encrypt: STARTTLS must succeed (no plaintext), the certificate is not checked;
 *  - authenticate: STARTTLS must succeed and verifyPeer() must accept the certificate chain;
 *  - skip-mx: do not connect to this MX (defer if no other MX remains).
 */
export function tlsRequirement(result: DaneResult): TlsRequirement {
  switch (result.kind) {
    case 'dane':
      return 'authenticate';
    case 'unusable':
      return 'encrypt';
    case 'failed':
      return 'skip-mx';
    default:
      return 'opportunistic';
  }
}
