/**
 * Automatic shaping rules as data (issue 35), beside the provider table (site-limits.ts) and in
 * the spirit of KumoMTA's shaping.toml automation: a deferral or rejection text from a provider
 * turns into a temporary change for the source that received it at that provider's sites, then
 * lapses by itself. shaping-match.ts checks and matches them; delivery/shaping-gate.ts applies
 * them. Operators add their own rules before these and may disable these by id
 * (delivery.shaping).
 *
 * A rule that names a provider (a PROVIDER_LIMITS id) holds for all of that provider's sites:
 * Yahoo's [TSS04] is about the sending IP at Yahoo, whichever of its MX sets said it. A rule
 * that names MX suffixes, or nothing, holds for the one site that answered.
 *
 * The texts are the providers' own, as their postmaster pages and MTA vendors quote them; each
 * rule's unit test runs its text. A reply is matched on one line (continuation lines' codes
 * removed, shaping-match.ts), so a pattern may span the lines of a multi-line reply.
 */

/** What a rule does while it holds: take the source out for the site, or hold it to a ceiling. */
export type ShapingAction = { kind: 'suspend' } | { kind: 'ceiling'; concurrency?: number; perSecond?: number };

export interface ShapingRule {
  /** Names the rule in logs, GET /ops/sources and delivery.shaping.disable. */
  id: string;
  /** A PROVIDER_LIMITS id: the rule applies at that provider's sites, and its change holds at all of them. */
  provider?: string;
  /** MX host name suffixes: the rule applies at a site with such an MX host, and its change holds at that site. */
  suffixes?: readonly string[];
  /** A regular expression (its source, matched case-insensitively) the reply text must match. */
  match?: string;
  /** The enhanced status code the reply must carry (RFC 3463), e.g. "4.7.28". */
  enhancedCode?: string;
  action: ShapingAction;
  /** How long the change holds after the last matching reply. */
  durationMs: number;
}

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;

export const BUILTIN_SHAPING_RULES: readonly ShapingRule[] = [
  // Yahoo/AOL: "421 4.7.0 [TSS04] Messages from 192.0.2.1 temporarily deferred due to unexpected
  // volume or user complaints - 4.16.55.1; see https://postmaster.yahooinc.com/error-codes"
  // ([TS04] in older replies). KumoMTA's shaping.toml (provider "yahoo", provided by Yahoo):
  // regex \[TS?S04\], Suspend, 2 hours; Yahoo asks senders to stop and come back later.
  { id: 'yahoo-tss04', provider: 'yahoo', match: '\\[TS?S04\\]', action: { kind: 'suspend' }, durationMs: 2 * HOUR },
  // Yahoo: "421 4.7.0 [TSS05] Messages from 192.0.2.1 temporarily deferred due to unexpected volume
  // or user complaints - 4.16.55.1" (quoted by Fortinet's FortiMail troubleshooting tip 380206):
  // the same deferral as [TSS04], the same pause.
  { id: 'yahoo-tss05', provider: 'yahoo', match: '\\[TSS05\\]', action: { kind: 'suspend' }, durationMs: 2 * HOUR },
  // Yahoo: "421 4.7.1 [TS03] All messages from 192.0.2.1 permanently deferred" (Yahoo help
  // SLN3436: "we do not recommend attempting to resend your messages until you examine your
  // subscription practices and lists"): a longer pause than [TSS04].
  { id: 'yahoo-ts03', provider: 'yahoo', match: '\\[TS03\\]', action: { kind: 'suspend' }, durationMs: 4 * HOUR },
  // Microsoft (Outlook.com, Exchange Online): "451 4.7.500 Server busy. Please try again later from
  // [192.0.2.1]. (S77719)" (cloudmailin's 451 reference, Bento's S77719 page: "slow down").
  // KumoMTA's default automation: one connection and a low message rate for a while.
  {
    id: 'microsoft-server-busy',
    provider: 'microsoft',
    enhancedCode: '4.7.500',
    match: 'Server busy\\. Please try again later from',
    action: { kind: 'ceiling', concurrency: 1, perSecond: 1 },
    durationMs: 30 * MINUTE,
  },
  // Microsoft: "451 4.7.650 The mail server [192.0.2.1] has been temporarily rate limited due to IP
  // reputation. For e-mail delivery information, see https://postmaster.live.com (S775)" and its
  // 4.7.651 twin (suped.com; Broadcom KB 438593 quotes "has been rate limited due to IP reputation").
  // KumoMTA's default automation matches "has been temporarily rate limited due to IP reputation".
  {
    id: 'microsoft-ip-reputation',
    provider: 'microsoft',
    match: 'rate limited due to IP reputation',
    action: { kind: 'ceiling', concurrency: 1, perSecond: 1 },
    durationMs: 30 * MINUTE,
  },
  // Gmail: "421-4.7.28 [192.0.2.1] Our system has detected an unusual rate of unsolicited mail
  // originating from your IP address. To protect our users from spam, mail sent from your IP
  // address has been temporarily rate limited. Please visit
  // https://support.google.com/mail/?p=UnsolicitedRateLimitError ... - gsmtp" (Google's bulk
  // sender guidelines; quoted in full by Zoho Campaigns' and Mythic Intel's pages). Google asks
  // for less, not for nothing: a lower ceiling for an hour.
  {
    id: 'google-unsolicited-rate',
    provider: 'google',
    enhancedCode: '4.7.28',
    match: 'unusual rate of unsolicited mail',
    action: { kind: 'ceiling', concurrency: 2, perSecond: 2 },
    durationMs: HOUR,
  },
];
