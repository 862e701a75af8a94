/**
 * What one TLS negotiation with one MX host came to, in RFC 8460 4.3 terms, for TLS-RPT: told
 * once per new connection that tried (or should have tried) STARTTLS; kept connections and
 * connections that failed before EHLO are no negotiation and are not told.
 */
import type { TlsDetail } from '../domain/delivery-result.js';
import type { TlsResultType } from '../domain/tls-rpt.js';
import type { SessionFailure } from './smtp-results.js';

/** The RFC 8460 4.3 result types a negotiation can come to here. */
export type TlsFailureType = Extract<
  TlsResultType,
  'starttls-not-supported' | 'tlsa-invalid' | 'certificate-host-mismatch' | 'certificate-expired' | 'certificate-not-trusted' | 'validation-failure'
>;

export type TlsOutcome = { ok: true } | { ok: false; type: TlsFailureType; reason: string };

/** A new session: encrypted is a success unless the policy wanted a verified certificate (MTA-STS testing) and it did not verify. */
export function sessionOutcome(tls: boolean, detail: TlsDetail, wantsVerified: boolean): TlsOutcome {
  if (!tls) return { ok: false, type: 'starttls-not-supported', reason: detail.reason ?? 'STARTTLS not offered' };
  if (wantsVerified && detail.verified === false) return { ok: false, type: certificateFailure(detail.verifyError ?? ''), reason: detail.verifyError ?? 'certificate not verified' };
  return { ok: true };
}

/** A failure of the TLS phase: a refused STARTTLS, or a handshake or certificate failure. */
export function failureOutcome(f: SessionFailure): TlsOutcome {
  if (f.raw) return { ok: false, type: 'starttls-not-supported', reason: f.raw.trim() };
  // verifyPeer's refusal (smtp-session.ts): no TLSA record matched the chain (RFC 8460 4.3.2).
  if (f.reply.text.startsWith('DANE:')) return { ok: false, type: 'tlsa-invalid', reason: f.reply.text };
  return { ok: false, type: certificateFailure(f.reply.text), reason: f.reply.text };
}

/** Node's certificate error codes (X509 verify results, ERR_TLS_CERT_ALTNAME_INVALID) as RFC 8460 result types. */
function certificateFailure(text: string): TlsFailureType {
  if (/ALTNAME_INVALID|does not match certificate/i.test(text)) return 'certificate-host-mismatch';
  if (/CERT_HAS_EXPIRED|CERT_NOT_YET_VALID|expired/i.test(text)) return 'certificate-expired';
  if (/SELF_SIGNED|UNABLE_TO_VERIFY|UNABLE_TO_GET_ISSUER|self[- ]signed|CERT_UNTRUSTED|unable to get/i.test(text)) return 'certificate-not-trusted';
  return 'validation-failure';
}
