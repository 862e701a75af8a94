/**
 * What delivery tells TLS-RPT about one TLS negotiation (RFC 8460 4.3), and the shapes the
 * daily counts are kept in. A "session" in RFC 8460 is one attempt to negotiate TLS with one
 * MX host; delivery calls recordTlsResult once per such attempt.
 */

/** RFC 8460 4.3 result-type values (4.3.1 negotiation, 4.3.2 policy, 4.3.3 general failures). */
export const TLS_RESULT_TYPES = [
  'starttls-not-supported',
  'certificate-host-mismatch',
  'certificate-expired',
  'certificate-not-trusted',
  'validation-failure',
  'tlsa-invalid',
  'dnssec-invalid',
  'dane-required',
  'sts-policy-fetch-error',
  'sts-policy-invalid',
  'sts-webpki-invalid',
] as const;

export type TlsResultType = (typeof TLS_RESULT_TYPES)[number];

/** RFC 8460 4.4 policy-type: the policy the session was held to. */
export type TlsPolicyType = 'sts' | 'tlsa' | 'no-policy-found';

export interface TlsPolicy {
  type: TlsPolicyType;
  /** RFC 8460 4.4 policy-string: the MTA-STS policy's lines, or the TLSA records as text. */
  string?: string[];
  /** RFC 8460 4.4 mx-host: for sts, the policy's MX pattern that matched; for tlsa, the MX host. */
  mxHost?: string;
}

export interface TlsFailure {
  type: TlsResultType;
  sendingMtaIp?: string;
  /** Absent for a failure before any MX host (an MTA-STS policy that could not be fetched). */
  receivingMxHostname?: string;
  receivingIp?: string;
  /** RFC 8460 4.3 failure-reason-code: the TLS library's code or message. */
  failureReasonCode?: string;
}

export interface TlsResultInput {
  /** The recipient domain whose policy applied (RFC 8460 4.4 policy-domain). */
  policyDomain: string;
  policy: TlsPolicy;
  result: 'success' | TlsFailure;
}

/** One failure detail and how often it happened. */
export interface FailureCount {
  failure: TlsFailure;
  count: number;
}

/** The counts of one UTC day, policy domain and policy. */
export interface PolicyCounts {
  day: string;
  policyDomain: string;
  policy: TlsPolicy;
  success: number;
  failures: FailureCount[];
}
