/**
 * The MTA-STS policy file (RFC 8461 3.2) and the MX matching rule it carries (RFC 8461 4.1).
 * Pure text rules, no I/O: the fetcher (fetcher.ts) brings the text, the cache (cache.ts) keeps
 * the parsed result, delivery asks mxAllowed() for every MX host it would connect to.
 */
import { normalizeName } from '../dns/resolver.js';
import { trimBlanks } from '../domain/white-space.js';

export type StsMode = 'enforce' | 'testing' | 'none';

export interface StsPolicy {
  mode: StsMode;
  /** MX patterns, lower case without a trailing dot: "mail.shop-mail.net" or "*.shop-mail.net". */
  mx: string[];
  /** Seconds the policy may be cached (RFC 8461 3.2, at most MAX_AGE_LIMIT). */
  maxAge: number;
}

export type PolicyParse = { ok: true; policy: StsPolicy } | { ok: false; error: string };

/**
 * RFC 8461 3.3 suggests senders limit the policy body; 64 KiB is far above any real policy. The
 * fetcher reads no more (fetcher.ts), and parsePolicy refuses longer text whoever hands it over.
 */
export const MAX_POLICY_BYTES = 64 * 1024;

/** RFC 8461 3.2: "maximum value of 31557600" (one year). */
export const MAX_AGE_LIMIT = 31_557_600;

const MODES: readonly string[] = ['enforce', 'testing', 'none'];
// RFC 8461 3.2: sts-policy-mx-value = ["*."] Domain, Domain as in RFC 5321 4.1.2 (LDH labels).
const LABEL = '[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?';
const MX_PATTERN = new RegExp(`^(\\*\\.)?${LABEL}(\\.${LABEL})+$`);

/**
 * Parses a policy body. Lines end in LF or CRLF (sts-policy-term); a line is "key: value" with
 * optional white space after the colon. Unknown keys are ignored (sts-policy-ext); of a key
 * that appears twice the first counts, except mx, which may appear any number of times.
 * Linear in the text: one split, and per line an indexOf, an index-based trim (wsp.ts) and
 * anchored regexes that cannot backtrack beyond a label's 63 characters.
 * A max_age above one year is lowered to one year rather than refused: the domain asked for
 * the longest cache there is, and refusing would drop an enforce policy altogether.
 */
export function parsePolicy(text: string): PolicyParse {
  // Characters, not bytes: a UTF-8 body of MAX_POLICY_BYTES has at most as many characters.
  if (text.length > MAX_POLICY_BYTES) return { ok: false, error: `the policy is longer than ${MAX_POLICY_BYTES} characters` };
  const fields = new Map<string, string>();
  const mx: string[] = [];
  for (const raw of text.split('\n')) {
    const line = raw.endsWith('\r') ? raw.slice(0, -1) : raw;
    if (line.trim() === '') continue;
    const colon = line.indexOf(':');
    if (colon <= 0) return { ok: false, error: `line "${shorten(line)}" is not "key: value"` };
    const key = line.slice(0, colon);
    // sts-policy-field-delim = ":" *WSP, and *WSP may end a line; trimmed by index (wsp.ts).
    const value = trimBlanks(line.slice(colon + 1));
    if (key === 'mx') mx.push(value.toLowerCase().replace(/\.$/, ''));
    else if (!fields.has(key)) fields.set(key, value);
  }
  return checkFields(fields, mx);
}

function checkFields(fields: Map<string, string>, mx: string[]): PolicyParse {
  if (fields.get('version') !== 'STSv1') return { ok: false, error: 'version is not STSv1' };
  const mode = fields.get('mode') ?? '';
  if (!MODES.includes(mode)) return { ok: false, error: `mode "${shorten(mode)}" is not enforce, testing or none` };
  const age = fields.get('max_age') ?? '';
  // sts-policy-max-age-value = 1*10(DIGIT)
  if (!/^\d{1,10}$/.test(age)) return { ok: false, error: `max_age "${shorten(age)}" is not a number of seconds` };
  const bad = mx.find((p) => !MX_PATTERN.test(p));
  if (bad !== undefined) return { ok: false, error: `mx "${shorten(bad)}" is not a host name or *.domain pattern` };
  // An enforce or testing policy names the MX hosts it allows; only "none" may leave them out.
  if (mx.length === 0 && mode !== 'none') return { ok: false, error: `a ${mode} policy without mx` };
  return { ok: true, policy: { mode: mode as StsMode, mx, maxAge: Math.min(Number(age), MAX_AGE_LIMIT) } };
}

/**
 * RFC 8461 4.1: the MX host must equal a pattern, or match a wildcard pattern "*.d" whose "*"
 * stands for exactly one label ("*.shop-mail.net" allows "mx1.shop-mail.net", neither
 * "shop-mail.net" nor "a.mx1.shop-mail.net"). Host names compare case-insensitively, without
 * the root dot.
 */
export function mxAllowed(policy: Pick<StsPolicy, 'mx'>, mxHost: string): boolean {
  const host = normalizeName(mxHost);
  return policy.mx.some((pattern) => {
    if (!pattern.startsWith('*.')) return pattern === host;
    const dot = host.indexOf('.');
    return dot > 0 && host.slice(dot + 1) === pattern.slice(2);
  });
}

function shorten(s: string): string {
  return s.length > 60 ? `${s.slice(0, 57)}...` : s;
}
