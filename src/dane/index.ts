/**
 * DANE for outbound SMTP (RFC 7672), as one component delivery calls (delivery/dane-routing.ts
 * and the `dane` TLS level of delivery/tls-policy.ts, when `dns.dnssecValidating` is on).
 *
 * The contract delivery follows, per MX host H of a delivery attempt (after the MX lookup, before
 * connecting):
 *
 *   const dane = createDaneLookup(config.dns);          // once, at startup
 *   const result = await dane.tlsaFor(H);                // DaneResult, cached by TTL
 *   switch (tlsRequirement(result)) {
 *     'skip-mx'       → do not connect to H; record result.reason; try the next MX; when no MX
 *                       is left, defer (4.7.5-style temporary failure, RFC 7672 2.2), never bounce.
 *     'opportunistic' → as today: STARTTLS if offered, plaintext on failure (issue 21 defect 1).
 *     'encrypt'       → STARTTLS required: not offered, refused (454) or handshake failure →
 *                       QUIT and treat as a temporary failure of H (next MX, then defer). No
 *                       certificate check.
 *     'authenticate'  → as 'encrypt', and after the handshake:
 *                         tls.connect({ socket, servername: H, rejectUnauthorized: false })
 *                         // RFC 7672 8.1: send SNI = the TLSA base domain (result.tlsaBase)
 *                         const verdict = verifyPeer(result, tlsSocket);
 *                       verdict.ok false → QUIT before MAIL FROM, temporary failure of H with
 *                       verdict.reason (next MX, then defer).
 *   }
 *   Record result.kind and verdict.reason on the attempt (why TLS was or was not used).
 *
 * With nodemailer's SMTPConnection: { requireTLS: true, tls: { rejectUnauthorized: false,
 * servername: result.tlsaBase } }, and verifyPeer(result, connection._socket) in the
 * 'connect'-after-STARTTLS step (connection.secure true) before send().
 *
 * RFC 7672 2.2 "no fallback": where a result is 'dane' or 'unusable', delivery must never
 * retry H in plaintext, and MTA-STS 'testing' or any opportunistic setting does not weaken it.
 */
import dns from 'node:dns';
import { parseServers } from '../dns/resolver.js';
import { DaneLookup } from './lookup.js';
import { toDnsServer } from './secure-dns.js';

export { DaneLookup } from './lookup.js';
export { tlsRequirement, type DaneResult, type TlsRequirement } from './result.js';
export { verifyPeer, type PeerVerdict } from './verify-peer.js';
export { matchCertificate, type MatchResult } from './match.js';
export type { TlsaRecord } from './tlsa.js';

export interface DaneDnsConfig {
  servers: string[];
  timeoutMs: number;
  dnssecValidating: boolean;
}

/** From the dns section of the config: its servers, or the system's (resolv.conf) when empty. */
export function createDaneLookup(config: DaneDnsConfig): DaneLookup {
  const configured = parseServers(config.servers);
  const servers = (configured.length > 0 ? configured : dns.getServers()).map(toDnsServer);
  return new DaneLookup({ servers, validating: config.dnssecValidating, timeoutMs: config.timeoutMs });
}
