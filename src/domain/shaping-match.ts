/**
 * Checking and matching automatic shaping rules (shaping-rules.ts): the operator's
 * delivery.shaping is checked once when the config is loaded (shapingProblems: a bad pattern,
 * an unknown provider or rule id stops the start with the rule named), then compiled with the
 * built-in rules (compileShapingRules), the operator's first. matchShapingRule runs for every
 * reply of an attempt a configured source carried, so it must stay cheap and safe:
 *
 *  - the reply is cut to MAX_REPLY_CHARS and put on one line first (a multi-line reply's
 *    continuation codes removed), with linear-time expressions;
 *  - an operator's pattern may not nest quantifiers ("(a+)+"), quantify an alternation
 *    ("(a|ab)*") or use backreferences, the shapes whose backtracking grows exponentially
 *    with the text (safePatternProblem), so no reply can stall the delivery loop.
 */
import { parseDuration } from './duration.js';
import { PROVIDER_LIMITS } from './site-limits.js';
import { BUILTIN_SHAPING_RULES, type ShapingAction, type ShapingRule } from './shaping-rules.js';

/** One rule of delivery.shaping.rules, as written in the config file. */
export interface ShapingRuleSetting {
  id: string;
  provider?: string;
  suffixes?: string[];
  match?: string;
  enhancedCode?: string;
  action: 'suspend' | 'ceiling';
  concurrency?: number;
  perSecond?: number;
  /** "30m", "2h" (domain/duration.ts). */
  duration: string;
}

export interface ShapingSettings {
  rules: readonly ShapingRuleSetting[];
  disable: readonly string[];
}

/** A rule ready to match: its pattern compiled, and where it comes from. */
export interface CompiledShapingRule extends ShapingRule {
  origin: 'operator' | 'built-in';
  regex?: RegExp;
}

/** The reply of one recipient or of the attempt as a whole. */
export interface ShapingReply {
  smtpCode?: number;
  enhancedCode?: string;
  text: string;
}

/** Reply characters matched at most: the providers' throttling texts fit in a few hundred. */
export const MAX_REPLY_CHARS = 1000;
const MAX_PATTERN_CHARS = 300;
const MIN_DURATION_MS = 60_000;
const MAX_DURATION_MS = 7 * 86_400_000;
const ENHANCED_CODE = /^[245]\.\d{1,3}\.\d{1,3}$/;

/** Every problem of delivery.shaping, one line each, the rule named. */
export function shapingProblems(s: ShapingSettings): string[] {
  const problems: string[] = [];
  const ids = new Set(BUILTIN_SHAPING_RULES.map((r) => r.id));
  const own = new Set<string>();
  s.rules.forEach((r, i) => {
    const at = `"delivery.shaping.rules" [${i}] (${JSON.stringify(r.id)})`;
    if (ids.has(r.id) || own.has(r.id)) problems.push(`${at}: the id is taken (built-in rules and earlier rules); choose another`);
    own.add(r.id);
    problems.push(...ruleProblems(r).map((p) => `${at}: ${p}`));
  });
  for (const id of s.disable) {
    if (!ids.has(id)) problems.push(`"delivery.shaping.disable": ${JSON.stringify(id)} is no built-in rule (they are: ${[...ids].join(', ')})`);
  }
  return problems;
}

function ruleProblems(r: ShapingRuleSetting): string[] {
  const problems: string[] = [];
  if (r.provider !== undefined && !PROVIDER_LIMITS.some((p) => p.id === r.provider)) {
    problems.push(`unknown provider ${JSON.stringify(r.provider)} (known: ${PROVIDER_LIMITS.map((p) => p.id).join(', ')})`);
  }
  if (r.match === undefined && r.enhancedCode === undefined) problems.push('needs "match" (a pattern of the reply text) or "enhancedCode"');
  if (r.enhancedCode !== undefined && !ENHANCED_CODE.test(r.enhancedCode)) problems.push(`"enhancedCode" ${JSON.stringify(r.enhancedCode)} is not an enhanced status code such as 4.7.28 (RFC 3463)`);
  if (r.match !== undefined) {
    const bad = safePatternProblem(r.match);
    if (bad) problems.push(`"match": ${bad}`);
  }
  if (r.action === 'ceiling' && r.concurrency === undefined && r.perSecond === undefined) problems.push('a "ceiling" needs "concurrency" or "perSecond"');
  if (r.action === 'suspend' && (r.concurrency !== undefined || r.perSecond !== undefined)) problems.push('"concurrency" and "perSecond" belong to a "ceiling", not to "suspend"');
  try {
    const ms = parseDuration(r.duration);
    if (ms < MIN_DURATION_MS || ms > MAX_DURATION_MS) problems.push(`"duration" must be between 1m and 7d, got ${r.duration}`);
  } catch (err) {
    problems.push(`"duration": ${(err as Error).message}`);
  }
  return problems;
}

/**
 * Why a pattern may not be used, or undefined: it must compile, stay short, and avoid the
 * shapes that backtrack exponentially (a quantified group holding a quantifier or an
 * alternation, a backreference). Character classes and escapes are skipped as units.
 */
export function safePatternProblem(pattern: string): string | undefined {
  if (pattern.length === 0 || pattern.length > MAX_PATTERN_CHARS) return `must be 1 to ${MAX_PATTERN_CHARS} characters`;
  try {
    new RegExp(pattern, 'i');
  } catch (err) {
    return `not a regular expression: ${(err as Error).message}`;
  }
  if (/\\[1-9]|\\k</.test(pattern)) return 'backreferences are not allowed';
  return nestedQuantifier(pattern) ? 'a repeated group may not hold a quantifier or an alternation ("(a+)+", "(a|ab)*"): their matching can take exponential time' : undefined;
}

/** True when a group followed by a quantifier holds a quantifier or "|". */
function nestedQuantifier(p: string): boolean {
  const stack: boolean[] = [];
  let inner = false;
  for (let i = 0; i < p.length; i++) {
    const c = p[i]!;
    if (c === '\\') i++;
    else if (c === '[') i = classEnd(p, i);
    else if (c === '(') {
      stack.push(inner);
      inner = false;
      i = groupPrefixEnd(p, i);
    } else if (c === ')') {
      const risky: boolean = inner;
      inner = (stack.pop() ?? false) || risky;
      if (risky && isQuantifier(p, i + 1)) return true;
    } else if (c === '|' || isQuantifier(p, i)) inner = true;
  }
  return false;
}

/** The last index of a group's opening: "(", "(?:", "(?=", "(?<=", "(?<name>"; its "?" is no quantifier. */
function groupPrefixEnd(p: string, i: number): number {
  if (p[i + 1] !== '?') return i;
  if (p[i + 2] !== '<' || p[i + 3] === '=' || p[i + 3] === '!') return p[i + 2] === '<' ? i + 3 : i + 2;
  const close = p.indexOf('>', i);
  return close === -1 ? i + 2 : close;
}

function isQuantifier(p: string, i: number): boolean {
  const c = p[i];
  return c === '*' || c === '+' || c === '?' || (c === '{' && /^\{\d+(,\d*)?\}/.test(p.slice(i, i + 12)));
}

/** The index of the "]" closing the class that opens at i. */
function classEnd(p: string, i: number): number {
  let j = i + 1;
  if (p[j] === '^') j++;
  if (p[j] === ']') j++;
  for (; j < p.length && p[j] !== ']'; j++) if (p[j] === '\\') j++;
  return j;
}

/** The operator's rules (first), then the built-in ones not disabled. Call after shapingProblems found none. */
export function compileShapingRules(s: ShapingSettings = { rules: [], disable: [] }): CompiledShapingRule[] {
  const own = s.rules.map((r): CompiledShapingRule => ({ ...fromSetting(r), origin: 'operator' }));
  const builtIn = BUILTIN_SHAPING_RULES.filter((r) => !s.disable.includes(r.id)).map((r): CompiledShapingRule => ({ ...r, origin: 'built-in' }));
  return [...own, ...builtIn].map((r) => (r.match === undefined ? r : { ...r, regex: new RegExp(r.match, 'i') }));
}

function fromSetting(r: ShapingRuleSetting): ShapingRule {
  const action: ShapingAction = r.action === 'suspend' ? { kind: 'suspend' } : { kind: 'ceiling', concurrency: r.concurrency, perSecond: r.perSecond };
  return { id: r.id, provider: r.provider, suffixes: r.suffixes, match: r.match, enhancedCode: r.enhancedCode, action, durationMs: parseDuration(r.duration) };
}

/**
 * The first rule that matches a reply at a site, or undefined. `provider` is the site's
 * PROVIDER_LIMITS id, `hosts` its MX host names (lowercase). Only failures are matched: a
 * 2yz reply never shapes, whatever its text says.
 */
export function matchShapingRule(rules: readonly CompiledShapingRule[], reply: ShapingReply, provider: string | undefined, hosts: readonly string[]): CompiledShapingRule | undefined {
  if (reply.smtpCode !== undefined && reply.smtpCode < 400) return undefined;
  const text = oneLine(reply.text);
  return rules.find(
    (r) =>
      (r.provider === undefined || r.provider === provider) &&
      (r.suffixes === undefined || r.suffixes.some((s) => hosts.some((h) => onSuffix(h, s)))) &&
      (r.enhancedCode === undefined || r.enhancedCode === reply.enhancedCode) &&
      (r.regex === undefined || r.regex.test(text)),
  );
}

/**
 * A reply on one line, cut to MAX_REPLY_CHARS: "421-4.7.28 a\r\n421 4.7.28 b" → "421-4.7.28 a b".
 * The continuation lines' reply codes and enhanced codes (RFC 5321 4.2.1) are removed.
 */
export function oneLine(text: string): string {
  return text
    .slice(0, MAX_REPLY_CHARS + 200)
    .replace(/\r?\n\d{3}[ -](?:[245]\.\d{1,3}\.\d{1,3} )?/g, ' ')
    .replace(/[\r\n]+/g, ' ')
    .slice(0, MAX_REPLY_CHARS);
}

/** "google.com" matches "google.com" and "aspmx.l.google.com", never "notgoogle.com". */
function onSuffix(host: string, suffix: string): boolean {
  const s = suffix.toLowerCase().replace(/^\*?\./, '').replace(/\.$/, '');
  return host === s || host.endsWith(`.${s}`);
}
