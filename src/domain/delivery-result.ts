/**
 * The value one delivery attempt returns (DESIGN: "delivery attempts return outcome values;
 * recording an outcome is one transaction elsewhere"). Plain data: the SMTP client builds it,
 * the queue's recordOutcome stores it.
 */
import type { BounceCategory, BounceType, DeliveryPhase, Outcome } from './delivery-outcome.js';

export interface RecipientResult {
  recipient: string;
  outcome: Outcome;
  bounceType?: BounceType;
  category: BounceCategory;
  phase: DeliveryPhase;
  smtpCode?: number;
  enhancedCode?: string;
  /** The server's reply as received, or our description of a local failure. */
  response: string;
}

export interface AttemptResult {
  /** One entry per recipient of the job, in the job's order. */
  recipients: RecipientResult[];
  /** MX host name the session was with (or the last one tried), absent when DNS failed. */
  mx?: string;
  /** The IP address connected to. */
  address?: string;
  /** The source (delivery.sources) the attempt was sent from; absent when none is configured. */
  source?: string;
  /** True when the session ran over STARTTLS (RFC 3207). */
  tls: boolean;
  /** How the session was (or was not) encrypted; absent without a session. */
  tlsDetail?: TlsDetail;
  /** The recipient domain's MTA-STS policy (RFC 8461) that applied to the attempt, if it has one. */
  mtaSts?: StsAttempt;
  /** True when the session was a kept connection's (after RSET), false for a new one; absent without a session. */
  reused?: boolean;
  /** The reply that best summarizes the attempt (the final DATA reply, or the failure). */
  smtpCode?: number;
  enhancedCode?: string;
  response: string;
  /** A sandbox message's outcome at its scheduled time (domain/sandbox-outcome.ts): no session, nothing sent. */
  simulated?: true;
  /**
   * Every source of the message's IP pool was refused for now (delivery/source-picker.ts: a
   * warm-up cap, a shaping suspension, a failing address), so no session was opened. `until`:
   * the earliest time one of them may send again, when known. Such a deferral says nothing of
   * the receiver: it is retried then (else on the schedule) and never expires into a bounce
   * (issue 35: mail over a warm-up cap waits, "deferred, never bounced").
   */
  poolRefused?: { until?: number };
}

/**
 * The TLS state of an attempt's session: protocol and cipher when encrypted, with whether the
 * certificate verified (chain and MX host name; opportunistic TLS delivers either way, RFC 7435);
 * else why not (STARTTLS not offered, or refused or failed and plain text used instead).
 */
export interface TlsDetail {
  protocol?: string;
  cipher?: string;
  verified?: boolean;
  /** Why the certificate did not verify (node's authorizationError, e.g. DEPTH_ZERO_SELF_SIGNED_CERT). */
  verifyError?: string;
  /** Why the session ran in plain text. */
  reason?: string;
  /** DANE's verdict on the session where TLSA records made TLS mandatory (RFC 7672), e.g. "DANE: authenticated by …". */
  dane?: string;
}

/**
 * The MTA-STS policy an attempt ran under (RFC 8461): its mode and id, and `failure`: why the
 * attempt failed under `enforce`, or what `enforce` would have refused under `testing`.
 */
export interface StsAttempt {
  mode: 'enforce' | 'testing' | 'none';
  id: string;
  failure?: string;
}

/** Every recipient gets the same outcome (a DNS failure, no MX reachable, a refused sender). */
export function sameForAll(
  recipients: readonly string[],
  r: Omit<RecipientResult, 'recipient'>,
  extra: { mx?: string; address?: string; tls?: boolean } = {},
): AttemptResult {
  return {
    recipients: recipients.map((recipient) => ({ recipient, ...r })),
    mx: extra.mx,
    address: extra.address,
    tls: extra.tls ?? false,
    smtpCode: r.smtpCode,
    enhancedCode: r.enhancedCode,
    response: r.response,
  };
}
