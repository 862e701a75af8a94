/**
 * The TLS policy of outbound SMTP connections, in the levels of Postfix's
 * smtp_tls_security_level:
 *  - `may`, opportunistic TLS (RFC 7435, RFC 3207): STARTTLS when the server offers it, any
 *    certificate accepted, any protocol down to TLS 1.0 at OpenSSL security level 0. Weak TLS
 *    is better than the plain text that the alternative is (RFC 7435 3: "some protection most of
 *    the time"); a server that refuses STARTTLS or fails the handshake gets the mail in plain
 *    text over a new connection (`none`), as Postfix does, rather than never. TLS-RPT reports
 *    are sent at this level whatever the recipient domain's policy (RFC 8460 5.3, attempt.ts).
 *  - `none`: plain text, the fallback connection after STARTTLS failed under `may`.
 *  - `verify`: MTA-STS `enforce` (RFC 8461 4.2): STARTTLS is required, the certificate must
 *    chain to a trusted root and name the MX host, node's default protocols (TLS 1.2 and up);
 *    any failure defers the message (no fallback).
 *  - `dane`: the MX host has a validated TLSA RRset (RFC 7672 2.2; src/dane/): STARTTLS is
 *    required, SNI is the TLSA base domain (8.1), and after the handshake the chain must match
 *    a TLSA record (smtp-session.ts, verifyPeer), or for an RRset without usable records just be
 *    encrypted (RFC 7672 3.1). No fallback; DANE wins over MTA-STS for that host (RFC 8461 2).
 * The level is part of a kept connection's key (connection-cache.ts), so a plain-text fallback
 * or an unverified session is never reused where a verified one is required.
 */
import net from 'node:net';
import tls from 'node:tls';
import type { TlsDetail } from '../domain/delivery-result.js';
import type { ParsedReply } from '../domain/smtp-reply.js';
import type { SessionFailure } from './smtp-results.js';

export type TlsLevel = 'may' | 'none' | 'verify' | 'dane';

/** How TLS applies to one attempt's MX hosts (smtp-client.ts SmtpAttemptInput.tlsPolicy). */
export type TlsPolicy = { mode: 'opportunistic' } | { mode: 'mta-sts-enforce' | 'mta-sts-testing'; id: string };

export const OPPORTUNISTIC: TlsPolicy = { mode: 'opportunistic' };

/** The level a new connection starts at under the policy. */
export function firstLevel(policy: TlsPolicy | undefined): TlsLevel {
  return policy?.mode === 'mta-sts-enforce' ? 'verify' : 'may';
}

/** What the connection options of a level are built from. */
export interface TlsSettings {
  level: TlsLevel;
  /** The MX host name: SNI (RFC 6066 3) and, under `verify`, the name the certificate must carry (RFC 8461 4.2). */
  host: string;
  /** Trusted roots: node's, plus the operator's extra CA (delivery.mtaSts.caFile) when set. */
  ca?: string[];
  /** Why this connection is plain text (set for `none`). */
  reason?: string;
  /** SNI in place of the host (DANE: the TLSA base domain, RFC 7672 8.1). */
  servername?: string;
}

/** nodemailer SMTPConnection options for the level (requireTLS, ignoreTLS, tls). */
export function connectionTls(s: TlsSettings): { requireTLS: boolean; ignoreTLS: boolean; tls: tls.ConnectionOptions } {
  if (s.level === 'verify') {
    return { requireTLS: true, ignoreTLS: false, tls: { rejectUnauthorized: true, servername: s.host, ca: s.ca } };
  }
  if (s.level === 'dane') {
    // The certificate is judged by the TLSA records after the handshake, not by the CA roots;
    // mandatory TLS takes TLS 1.0 and up, as Postfix's smtp_tls_mandatory_protocols.
    return { requireTLS: true, ignoreTLS: false, tls: { rejectUnauthorized: false, servername: s.servername ?? sniName(s.host), minVersion: 'TLSv1', ciphers: 'DEFAULT:@SECLEVEL=0' } };
  }
  // Opportunistic: TLS 1.0 and legacy ciphers too (OpenSSL 3 refuses TLS < 1.2 above level 0).
  // The CA list is still given so that the attempt can record whether the certificate verified.
  const weak: tls.ConnectionOptions = { rejectUnauthorized: false, minVersion: 'TLSv1', ciphers: 'DEFAULT:@SECLEVEL=0', ca: s.ca };
  return { requireTLS: false, ignoreTLS: s.level === 'none', tls: weak };
}

/** The servername (SNI) to send: the MX host name, never an IP address (RFC 6066 3). */
export function sniName(host: string): string | undefined {
  return net.isIP(host) ? undefined : host;
}

/** What a session's socket tells about its TLS: protocol, cipher, whether the certificate verified. */
export function tlsDetailOf(socket: unknown, plainReason: string | undefined): TlsDetail {
  if (!(socket instanceof tls.TLSSocket)) return { reason: plainReason ?? 'STARTTLS not offered by the server' };
  const error = socket.authorizationError;
  return {
    protocol: socket.getProtocol() ?? undefined,
    cipher: socket.getCipher()?.name,
    verified: socket.authorized,
    verifyError: error ? String(error) : undefined,
  };
}

/** Why STARTTLS could not be had, from the failure of the TLS phase (the plain-text connection records it). */
export function fallbackReason(f: SessionFailure): string {
  return f.raw ? `STARTTLS refused: ${f.raw.trim()}` : `TLS handshake failed: ${f.reply.text}`;
}

/**
 * A TLS failure where the policy requires TLS: a temporary failure (4.7.5, RFC 3463
 * "cryptographic failure"), whatever the server replied to STARTTLS; the next MX is tried
 * and the message deferred (RFC 8461 5: "MUST NOT deliver" to a host that fails validation).
 */
export function requiredTlsFailure(f: SessionFailure, level: TlsLevel, policy: TlsPolicy | undefined): SessionFailure {
  const what = f.raw ? `STARTTLS refused: ${f.raw.trim()}` : f.reply.text;
  const id = policy && 'id' in policy ? ` (policy id ${policy.id})` : '';
  const by = level === 'dane' ? `TLS is required by the DANE TLSA records of ${f.target.host} (RFC 7672)` : `TLS with a verified certificate is required by the MTA-STS policy${id} of this destination`;
  const reply: ParsedReply = { enhancedCode: '4.7.5', text: `${by}, not delivered in plain text: ${what}` };
  return { target: f.target, phase: 'tls', reply };
}
