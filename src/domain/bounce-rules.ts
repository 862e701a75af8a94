/**
 * Bounce classification rules as data, in the spirit of ZoneMTA's config/bounces.txt:
 * pattern → action + category, first match wins. smtp-reply.ts applies them.
 *
 * Matching: `phases` (where the reply came), `class` (4 or 5 after RFC 3463 precedence),
 * `codes` (basic reply codes), `status` (enhanced code subject.detail, "2.2" or "7.*", RFC 3463 3.x), `text` (a regular
 * expression over the reply text without codes). All given fields must match.
 *
 * Actions only matter for permanent (5yz) replies; a 4yz reply always defers (RFC 5321 4.2.1)
 * and takes only the category from its rule:
 *  - defer: a 5yz that experience says is temporary (full mailbox, greylisting, rate limits,
 *    "try again later", our IP on a block list that can be delisted): retry on the schedule;
 *  - bounce: hard bounce, the address does not exist or is disabled: the recipient is
 *    suppressed for the channel;
 *  - soft-bounce: this message is refused (policy, content, size) but nothing says the address
 *    is bad, so nobody is suppressed. Suppressing a whole list because our IP failed a DMARC or
 *    spam check would be worse than the bounce.
 *
 * Order: specific temporary patterns first (a greylisting reply often says "Recipient address
 * rejected"), then address patterns, then content and policy, then fallbacks by enhanced code.
 * Examples are real replies of big providers; the unit tests run every one of them.
 */
import type { BounceCategory, DeliveryPhase } from './delivery-outcome.js';

export type RuleAction = 'defer' | 'bounce' | 'soft-bounce';

export interface BounceRule {
  id: string;
  phases?: readonly DeliveryPhase[];
  class?: 4 | 5;
  /** Basic reply codes (RFC 5321 4.2.3). */
  codes?: readonly number[];
  status?: string;
  text?: RegExp;
  action: RuleAction;
  category: BounceCategory;
}

export const BOUNCE_RULES: readonly BounceRule[] = [
  // ---- where the phase says it all ----
  // STARTTLS refused or handshake failed: RFC 3207 4.1 lets the client go on, but we never fall
  // back to plain text after a failed handshake on the same attempt; we try again later.
  { id: 'tls-phase', phases: ['tls'], action: 'defer', category: 'tls' },
  // A name server did not answer (SERVFAIL, timeout): RFC 5321 5.1 / 4.5.4.1, retry later.
  { id: 'dns-temporary', phases: ['dns'], class: 4, action: 'defer', category: 'dns' },
  // Our own lookup found no such domain (NXDOMAIN, or no MX and no address records: mx.ts
  // answers 5.1.2) or a null MX (RFC 7505, 5.1.10): a DNS failure, not an unknown user, although
  // the description says "does not exist". Hard; whether it suppresses is delivery's business
  // (store/dns-failures.ts: only after repeated failures of the domain).
  { id: 'dns-no-domain', phases: ['dns'], class: 5, status: '1.2', action: 'bounce', category: 'dns' },
  { id: 'dns-null-mx', phases: ['dns'], class: 5, status: '1.10', action: 'bounce', category: 'dns' },

  // ---- temporary conditions, even when sent as 5yz ----
  // 503 "bad sequence of commands" is about the session's state, not the message (RFC 5321
  // 4.2.3); a new session can succeed.
  { id: 'bad-sequence', codes: [503], action: 'defer', category: 'other' },
  // Greylisting (RFC 6647): postgrey "450 4.2.0 <x>: Recipient address rejected: Greylisted",
  // milter-greylist "451 4.7.1 Greylisting in action, please come back later".
  { id: 'greylisting', text: /\bgr[ae]y ?list(ed|ing)?\b/i, action: 'defer', category: 'greylisted' },
  // Rate limits: Gmail 4.7.28 "temporarily rate limited", 4.2.1 "receiving mail at a rate",
  // Yahoo [TSS04] "temporarily deferred due to unexpected volume", Microsoft 4.7.500 "Server busy".
  {
    id: 'rate-limit',
    text: /rate[ -]?limit|too many (messages|connections|concurrent|sessions|recipients|mails)|unexpected volume|receiving (mail|email) at a rate|mail too quickly|sending (quota|limit)|throttl|server busy|\[TSS0[14]\]|\bRP-00\d|exceeded (the )?(hourly|daily|message|connection) (rate|limit|quota)/i,
    action: 'defer',
    category: 'rate_limited',
  },
  // Full mailbox (RFC 3463 X.2.2): Gmail "452-4.2.2 ... is over quota", Yahoo "552 1 Requested mail
  // action aborted, mailbox full", Microsoft "554 5.2.2 mailbox full; STOREDRV...QuotaExceeded".
  {
    id: 'mailbox-full',
    text: /mailbox (is )?full|over ?quota|quota ?exceeded|exceeded (its |the )?(storage|quota)|out of storage|inbox is full|insufficient (storage|disk space) for (user|mailbox)/i,
    action: 'defer',
    category: 'mailbox_full',
  },
  { id: 'mailbox-full-status', status: '2.2', action: 'defer', category: 'mailbox_full' },
  // Our sending IP on a DNS block list (ZoneMTA defers these too: delisting takes hours, not days).
  {
    id: 'blocklisted-ip',
    text: /blocked using|block ?list|black ?list|spamhaus|\bdnsbl\b|\brbl\b|listed (at|in|on|by) |banned sending ip|poor reputation|bad reputation|\[BL\d+\]|traffic not accepted from this ip/i,
    action: 'defer',
    category: 'spam',
  },
  // "Try again later" in a permanent reply is a server that picked the wrong code.
  {
    id: 'try-again',
    text: /try again later|please try (again )?later|come back later|retry later|temporar(il)?y (unavailable|deferred|rejected|blocked|failed)|insufficient system (resources|storage)/i,
    action: 'defer',
    category: 'other',
  },
  // A receiver that demands TLS we could not give (RFC 3207 4): maybe fixed on their side.
  { id: 'tls-required', text: /tls required|must issue a starttls|encryption required|requires? (tls|encryption)/i, action: 'defer', category: 'tls' },

  // ---- about our own message or command, never about the recipient ----
  // 500/501/502/504/555 say the syntax of what we sent is wrong (RFC 5321 4.2.2, 4.2.3), e.g.
  // "500 Line too long" for a line over 998 octets (RFC 5321 4.5.3.1.6). Recipient syntax was
  // checked when the message was accepted, so none of them is evidence that the mailbox is bad.
  { id: 'our-syntax', codes: [500, 501, 502, 504, 555], action: 'soft-bounce', category: 'other' },
  { id: 'line-too-long', text: /\bline (is )?too long|line length (exceeded|limit)|lines? longer than \d+/i, action: 'soft-bounce', category: 'other' },
  // 552 is "exceeded storage allocation" (RFC 5321 4.2.2) or a size refusal (RFC 1870 6.2):
  // a full mailbox was deferred above; what is left is about the size of this message.
  { id: 'size-code', codes: [552], action: 'soft-bounce', category: 'message_too_large' },

  // ---- the address does not exist or is disabled ----
  // Gmail "550-5.1.1 The email account that you tried to reach does not exist", Microsoft
  // "550 5.5.0 Requested action not taken: mailbox unavailable", "550 5.4.1 Recipient address
  // rejected: Access denied", "5.1.10 RESOLVER.ADR.RecipientNotFound", Yahoo "554 delivery error:
  // dd This user doesn't have a yahoo.com account".
  {
    id: 'unknown-user',
    text: /user unknown|unknown user|unknown recipient|no such (user|mailbox|recipient|address|account)|does not exist|doesn'?t exist|mailbox (is )?unavailable|mailbox not found|invalid (mailbox|recipient)|recipient not found|recipientnotfound|not a valid (mailbox|recipient|user)|unrouteable address|recipient address rejected: (user unknown|access denied|undeliverable)|doesn'?t have an? [\w.-]+ account|(mailbox|account) (is |has been )?(disabled|deactivated|closed|suspended|inactive)|inactive (user|account|mailbox)/i,
    action: 'bounce',
    category: 'unknown_user',
  },

  // ---- the message or the sender is refused, the address is fine ----
  // "exceeded ... message size" with a bounded gap, not ".*": a remote MX's reply (up to 1 MiB)
  // or a DSN's Diagnostic-Code full of "exceeded " made ".*" scan the rest of the text from each
  // one, quadratic (10 s for 200 KB; issue 29). Every other rule is linear (checked with recheck).
  {
    id: 'message-too-large',
    text: /message (size )?(is )?too (big|large|long)|size limit|exceeds? (the )?(maximum )?(allowed )?(message )?size|message size exceeds|exceeded .{0,80}message size/i,
    action: 'soft-bounce',
    category: 'message_too_large',
  },
  // Gmail 5.7.1 "likely unsolicited mail", 5.7.0 "potential security issue"; virus scanners.
  {
    id: 'spam-content',
    text: /\bspam\b|unsolicited|junk mail|suspicious|virus|malware|content (rejected|blocked|not accepted)/i,
    action: 'soft-bounce',
    category: 'spam',
  },
  // Gmail "550-5.7.26 This mail has been blocked because the sender is unauthenticated", DMARC
  // rejections, Yahoo "554 5.7.9 Message not accepted for policy reasons", relay refusals.
  {
    id: 'policy',
    text: /unauthenticated|not authenticated|authentication|\bdmarc\b|\bspf\b|\bdkim\b|polic(y|ies)|not authori[sz]ed|unauthori[sz]ed|relay(ing)? (access )?(denied|not permitted)|\bptr\b|reverse dns|access denied/i,
    action: 'soft-bounce',
    category: 'policy',
  },

  // ---- fallbacks by enhanced status code (RFC 3463 3.x) ----
  { id: 'status-null-mx', status: '1.10', action: 'bounce', category: 'dns' }, // RFC 7505 4.1
  { id: 'status-bad-domain', status: '1.2', action: 'bounce', category: 'dns' },
  { id: 'status-bad-sender', status: '1.7', action: 'soft-bounce', category: 'policy' },
  { id: 'status-bad-sender-system', status: '1.8', action: 'soft-bounce', category: 'policy' },
  { id: 'status-addressing', status: '1.*', action: 'bounce', category: 'unknown_user' },
  { id: 'status-mailbox-disabled', status: '2.1', action: 'bounce', category: 'unknown_user' },
  { id: 'status-mailbox-too-large', status: '2.3', action: 'soft-bounce', category: 'message_too_large' },
  { id: 'status-mailing-list', status: '2.4', action: 'defer', category: 'other' },
  { id: 'status-mailbox', status: '2.*', action: 'bounce', category: 'unknown_user' },
  { id: 'status-system-too-large', status: '3.4', action: 'soft-bounce', category: 'message_too_large' },
  { id: 'status-system-full', status: '3.1', action: 'defer', category: 'other' },
  { id: 'status-system-down', status: '3.2', action: 'defer', category: 'other' },
  { id: 'status-system', status: '3.*', action: 'soft-bounce', category: 'other' },
  { id: 'status-no-answer', status: '4.1', action: 'defer', category: 'connection' },
  { id: 'status-bad-connection', status: '4.2', action: 'defer', category: 'connection' },
  { id: 'status-routing-server', status: '4.3', action: 'defer', category: 'dns' },
  { id: 'status-unable-to-route', status: '4.4', action: 'soft-bounce', category: 'dns' },
  { id: 'status-congestion', status: '4.5', action: 'defer', category: 'rate_limited' },
  { id: 'status-network', status: '4.*', action: 'soft-bounce', category: 'connection' },
  { id: 'status-protocol', status: '5.*', action: 'soft-bounce', category: 'other' },
  { id: 'status-content', status: '6.*', action: 'soft-bounce', category: 'policy' },
  { id: 'status-security', status: '7.*', action: 'soft-bounce', category: 'policy' },
];
