/**
 * The Content-Type field of a MIME entity (RFC 2045 5.1): `type/subtype`, then `; name=value`
 * parameters whose value is a token or a quoted string. A hand-written scanner that looks at
 * each character a bounded number of times: the regular expression it replaces
 * (`/([\w.-]+)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^;\s]+))/g`) started again from every character of
 * a run of name characters without "=", and a 96 KB run held the event loop for 13.6 s on the
 * inbound listener, which parses every message it receives (issue 29). It reads what that
 * expression read: a name run anywhere after the first ";", then optional white space, "=",
 * optional white space and the value; a later parameter of the same name wins.
 */
import { isLineTerminator, isWhiteSpace } from '../domain/white-space.js';

export interface ContentType {
  /** Lowercased type/subtype; text/plain when absent (RFC 2045 5.2). */
  type: string;
  params: Record<string, string>;
}

/**
 * Longest parameter name or value kept; longer ones are ignored. No parameter a report needs is
 * near it: a boundary is at most 70 characters (RFC 2046 5.1.1), report-type and charset are
 * short tokens.
 */
export const MAX_PARAM_LENGTH = 1000;

export function parseContentType(value: string): ContentType {
  const semi = value.indexOf(';');
  const head = semi < 0 ? value : value.slice(0, semi);
  const params: Record<string, string> = {};
  if (semi >= 0) readParams(value, semi + 1, params);
  return { type: head.trim().toLowerCase() || 'text/plain', params };
}

function readParams(s: string, from: number, params: Record<string, string>): void {
  let i = from;
  while (i < s.length) {
    if (!isNameChar(s.charCodeAt(i))) {
      i++;
      continue;
    }
    const nameStart = i;
    while (i < s.length && isNameChar(s.charCodeAt(i))) i++;
    // A run that is not followed by "=" and a value fails the same way from each of its characters: go past it.
    let j = skipWhiteSpace(s, i);
    if (s[j] !== '=') continue;
    j = skipWhiteSpace(s, j + 1);
    const v = quotedValue(s, j) ?? tokenValue(s, j);
    if (!v) continue;
    const name = s.slice(nameStart, i);
    if (name.length <= MAX_PARAM_LENGTH && v.value.length <= MAX_PARAM_LENGTH) params[name.toLowerCase()] = v.value;
    i = v.end;
  }
}

/** `[\w.-]`: the characters of a parameter name as the old expression read them. */
function isNameChar(c: number): boolean {
  return (c >= 0x61 && c <= 0x7a) || (c >= 0x41 && c <= 0x5a) || (c >= 0x30 && c <= 0x39) || c === 0x5f || c === 0x2e || c === 0x2d;
}

function skipWhiteSpace(s: string, i: number): number {
  while (i < s.length && isWhiteSpace(s.charCodeAt(i))) i++;
  return i;
}

/**
 * A quoted string (RFC 2045 5.1, RFC 5322 3.2.4) starting at `start`, unquoted: a backslash
 * escapes the next character unless that ends a line; null when the string is not closed.
 */
function quotedValue(s: string, start: number): { value: string; end: number } | null {
  if (s[start] !== '"') return null;
  const parts: string[] = [];
  let copied = start + 1;
  for (let i = start + 1; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c === 0x22) {
      parts.push(s.slice(copied, i));
      return { value: parts.join(''), end: i + 1 };
    }
    if (c !== 0x5c) continue;
    if (i + 1 >= s.length || isLineTerminator(s.charCodeAt(i + 1))) return null;
    parts.push(s.slice(copied, i));
    copied = i + 1;
    i++;
  }
  return null;
}

/** `[^;\s]+` from `start`: a token, or null when there is none. */
function tokenValue(s: string, start: number): { value: string; end: number } | null {
  let i = start;
  while (i < s.length && s[i] !== ';' && !isWhiteSpace(s.charCodeAt(i))) i++;
  return i > start ? { value: s.slice(start, i), end: i } : null;
}
