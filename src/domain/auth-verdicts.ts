/**
 * The authentication verdicts of one received message (issue 33), as inbound/verify.ts finds them
 * and the message keeps them: SPF (RFC 7208), every DKIM signature (RFC 6376), DMARC (RFC 7489)
 * and ARC (RFC 8617). Results use the names of Authentication-Results (RFC 8601 2.7).
 */
export type SpfResult = 'none' | 'neutral' | 'pass' | 'fail' | 'softfail' | 'temperror' | 'permerror';
export type DkimResult = 'none' | 'pass' | 'fail' | 'policy' | 'neutral' | 'temperror' | 'permerror';
export type DmarcResult = 'none' | 'pass' | 'fail' | 'temperror' | 'permerror';
export type ArcResult = 'none' | 'pass' | 'fail';

export interface AuthVerdicts {
  /** `domain`: the domain whose SPF record was evaluated (MAIL FROM's, or HELO's). */
  spf: { result: SpfResult; domain: string | null };
  dkim: Array<{ domain: string; selector: string; result: DkimResult }>;
  /** `policy`: what the From domain asks for (p=, or sp= for a subdomain, RFC 7489 6.3). */
  dmarc: { result: DmarcResult; domain: string | null; policy: string | null };
  arc: { result: ArcResult };
  /** Why verification could not run, when it could not (the verdicts are then `temperror`). */
  problem?: string;
}
