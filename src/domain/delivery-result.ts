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
  /** True when the session ran over STARTTLS (RFC 3207). */
  tls: boolean;
  /** True when the session was a kept connection's (after RSET), false for a new one; absent without a session. */
  reused?: boolean;
  /** The reply that best summarizes the attempt (the final DATA reply, or the failure). */
  smtpCode?: number;
  enhancedCode?: string;
  response: string;
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
