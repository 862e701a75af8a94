/**
 * The post-handshake check delivery runs on a STARTTLS socket (see src/dane/index.ts for the
 * whole contract). Node verifies nothing here: delivery connects with rejectUnauthorized
 * false, because DANE-EE certificates are commonly self-signed and DANE-TA chains end in an
 * anchor no public store holds; the decision is made from the TLSA records alone.
 */
import { X509Certificate } from 'node:crypto';
import type { PeerCertificate, TLSSocket } from 'node:tls';
import type { DaneResult } from './result.js';
import { matchCertificate } from './match.js';

export interface PeerVerdict {
  ok: boolean;
  reason: string;
}

/** The chain the server presented, leaf first, from getPeerCertificate(true)'s issuer links. */
export function peerChain(socket: TLSSocket): X509Certificate[] {
  const chain: X509Certificate[] = [];
  const seen = new Set<string>();
  let cert: PeerCertificate | undefined = socket.getPeerCertificate(true) as PeerCertificate | undefined;
  while (cert?.raw && !seen.has(cert.fingerprint256)) {
    seen.add(cert.fingerprint256);
    chain.push(new X509Certificate(cert.raw));
    cert = (cert as PeerCertificate & { issuerCertificate?: PeerCertificate }).issuerCertificate;
  }
  return chain;
}

export function verifyPeer(result: DaneResult, socket: TLSSocket, now: Date = new Date()): PeerVerdict {
  switch (result.kind) {
    case 'dane': {
      if (!socket.encrypted) return { ok: false, reason: 'DANE: TLSA records exist but the connection is not encrypted' };
      const match = matchCertificate(peerChain(socket), result.records, result.names, now);
      return match.ok ? { ok: true, reason: `DANE: authenticated by ${match.how}` } : { ok: false, reason: `DANE: ${match.reason}` };
    }
    case 'unusable':
      return socket.encrypted
        ? { ok: true, reason: `DANE: encrypted, not authenticated (${result.reason})` }
        : { ok: false, reason: `DANE: TLS mandatory (${result.reason}) but the connection is not encrypted` };
    case 'failed':
      return { ok: false, reason: `DANE: ${result.reason}` };
    default:
      return { ok: true, reason: `DANE does not apply: ${result.reason}` };
  }
}
