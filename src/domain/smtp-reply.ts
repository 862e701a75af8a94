/**
 * SMTP reply parsing and classification: a pure function from (code, enhanced code, text,
 * phase) to what the queue must do. The knowledge lives in the rules table (bounce-rules.ts),
 * like ZoneMTA's config/bounces.txt; this file only applies it, in this order:
 *
 *  1. The class: the enhanced status code's class (RFC 3463 2: 2, 4 or 5) wins over the basic
 *     code's first digit when both are present, because it is the more specific statement
 *     (a "550 4.2.2" is a full mailbox, a temporary condition). A 2xx basic code is success.
 *  2. 2yz: delivered (RFC 5321 4.2.1).
 *  3. 4yz, and local failures without a reply (connection refused, timeout, TLS handshake,
 *     DNS SERVFAIL): deferred, always (RFC 5321 4.2.1 "transient negative completion";
 *     4.5.4.1 the client retries). The first matching rule only names the category.
 *  4. 5yz: the first matching rule decides: defer (known soft patterns), bounce (hard: the
 *     address is bad, it will be suppressed) or soft-bounce (this message is refused, the
 *     address is not known to be bad). No rule: a hard bounce (RFC 5321 4.2.1 "permanent").
 *     Replies about our own message or command (syntax 50x, "line too long", 552 size) have
 *     soft-bounce rules before any address rule: they never suppress a recipient.
 *  5. A refusal before any recipient was named (greeting, EHLO, MAIL FROM, a dropped session)
 *     says nothing about the recipient: a hard bounce there becomes a soft one. DNS answers
 *     are about the recipient's domain and may be hard (NXDOMAIN, null MX).
 */
import { BOUNCE_RULES, type BounceRule } from './bounce-rules.js';
import type { BounceCategory, BounceType, DeliveryPhase, Outcome } from './delivery-outcome.js';

export interface ReplyInput {
  /** Basic reply code (RFC 5321 4.2); absent for local failures (no reply was received). */
  code?: number;
  /** Enhanced status code "class.subject.detail" (RFC 3463), if the reply carried one. */
  enhancedCode?: string;
  /** Reply text without codes, or the local error message. */
  text: string;
  phase: DeliveryPhase;
}

export interface Classification {
  outcome: Outcome;
  /** Set on bounces only. */
  bounceType?: BounceType;
  category: BounceCategory;
  /** Id of the rule that matched, for logs and tests. */
  rule?: string;
}

export interface ParsedReply {
  code?: number;
  enhancedCode?: string;
  text: string;
}

/** RFC 3463 2: class "." subject "." detail; subject and detail are 1 to 3 digits. */
const ENHANCED = /^([245])\.(\d{1,3})\.(\d{1,3})(?=\s|$)/;
const BASIC = /^([2-5]\d\d)(?:[ -]|$)/;

/**
 * Most of a reply that is read, in characters: lines are at most 512 octets (RFC 5321
 * 4.5.3.1.5) and what a reply says is in its first ones, but a remote MX may send up to the SMTP
 * client's 1 MiB, and a DSN's Diagnostic-Code up to a report field's cap. Parsing and the bounce
 * rules' expressions then take time in proportion to the whole (issue 29); the rest is not read.
 */
export const MAX_REPLY_LENGTH = 16 * 1024;

/**
 * Parses a (possibly multi-line, RFC 5321 4.2.1) reply such as
 * "550-5.1.1 The email account ...\n550 5.1.1 https://...": the code and the enhanced code of
 * the first line, and the text of all lines with their codes removed, joined by spaces.
 */
export function parseReply(raw: string): ParsedReply {
  const lines = (raw.length > MAX_REPLY_LENGTH ? raw.slice(0, MAX_REPLY_LENGTH) : raw).replace(/\r/g, '').split('\n').filter((l) => l.trim() !== '');
  if (lines.length === 0) return { text: '' };
  const first = BASIC.exec(lines[0]);
  const code = first ? Number(first[1]) : undefined;
  let enhancedCode: string | undefined;
  const texts = lines.map((line) => {
    let rest = line;
    const m = BASIC.exec(rest);
    if (m) rest = rest.slice(m[0].length);
    const e = ENHANCED.exec(rest);
    if (e) {
      enhancedCode ??= `${e[1]}.${Number(e[2])}.${Number(e[3])}`;
      rest = rest.slice(e[0].length);
    }
    return rest.trim();
  });
  return { code, enhancedCode, text: texts.join(' ').replace(/\s+/g, ' ').trim() };
}

/** The reply class (2, 3, 4 or 5) or undefined for a local failure. */
export function replyClass(code: number | undefined, enhancedCode: string | undefined): number | undefined {
  const basic = code === undefined ? undefined : Math.floor(code / 100);
  if (basic === 2) return 2;
  const enhanced = enhancedCode ? Number(enhancedCode[0]) : undefined;
  if (enhanced === 4 || enhanced === 5) return enhanced;
  return basic;
}

/** Phases in which nothing was said about a recipient yet (see rule 5 above). */
const BEFORE_RECIPIENT: ReadonlySet<DeliveryPhase> = new Set(['connect', 'tls', 'greeting', 'ehlo', 'mail']);

export function classifyReply(input: ReplyInput, rules: readonly BounceRule[] = BOUNCE_RULES): Classification {
  const cls = replyClass(input.code, input.enhancedCode);
  if (cls === 2) return { outcome: 'delivered', category: 'delivered' };
  const text = input.text.length > MAX_REPLY_LENGTH ? input.text.slice(0, MAX_REPLY_LENGTH) : input.text;
  const rule = rules.find((r) => ruleMatches(r, { ...input, text }, cls));
  if (cls !== 5) {
    // 4yz, 3yz where a final reply was due, and local failures without a reply: transient.
    return { outcome: 'deferred', category: rule?.category ?? localCategory(input.phase), rule: rule?.id };
  }
  const action = rule?.action ?? 'bounce';
  const category = rule?.category ?? 'other';
  if (action === 'defer') return { outcome: 'deferred', category, rule: rule?.id };
  const hard = action === 'bounce' && !BEFORE_RECIPIENT.has(input.phase);
  return { outcome: 'bounced', bounceType: hard ? 'hard' : 'soft', category, rule: rule?.id };
}

/** Parse and classify in one step. */
export function classifyRawReply(raw: string, phase: DeliveryPhase): Classification & ParsedReply {
  const parsed = parseReply(raw);
  return { ...parsed, ...classifyReply({ ...parsed, phase }) };
}

function localCategory(phase: DeliveryPhase): BounceCategory {
  if (phase === 'dns') return 'dns';
  if (phase === 'tls') return 'tls';
  return 'connection';
}

function ruleMatches(rule: BounceRule, input: ReplyInput, cls: number | undefined): boolean {
  if (rule.phases && !rule.phases.includes(input.phase)) return false;
  if (rule.class !== undefined && rule.class !== cls) return false;
  if (rule.codes !== undefined && (input.code === undefined || !rule.codes.includes(input.code))) return false;
  if (rule.status !== undefined && !statusMatches(rule.status, input.enhancedCode)) return false;
  if (rule.text !== undefined && !rule.text.test(input.text)) return false;
  return true;
}

/** "2.2" matches X.2.2 exactly; "7.*" matches any X.7.Y (RFC 3463 subject 7). */
function statusMatches(pattern: string, enhancedCode: string | undefined): boolean {
  if (!enhancedCode) return false;
  const [, subject, detail] = enhancedCode.split('.');
  const [ps, pd] = pattern.split('.');
  return ps === subject && (pd === '*' || pd === detail);
}
