/**
 * A strict parser for the header fields that say who a message is from: From is a
 * mailbox-list, Sender one mailbox (RFC 5322 3.6.2). Strict on purpose: a lenient parser and
 * the recipient's mail program can read different addresses out of the same text
 * ("app@ours.example ceo@bank.example", "<app@ours.example> <ceo@bank.example>"), and then we
 * would check one address and sign for another. Anything this grammar does not cover is refused:
 *
 *   mailbox-list = mailbox *("," mailbox)                        (RFC 5322 3.4)
 *   mailbox      = addr-spec / [display-name] "<" addr-spec ">"
 *   display-name = 1*(atom / quoted-string / ".")                ("." as obs-phrase, 4.1,
 *                                                                  for the common John Q. Public)
 *   addr-spec    = (dot-atom / quoted-string) "@" (dot-atom / domain-literal)
 *
 * with comments and folding white space between tokens (CFWS, 3.2.2). Refused: groups
 * (":" ";", not allowed in From by RFC 5322), source routes, empty list elements (obs-mbox-list)
 * and stray characters. UTF-8 in atoms is allowed (RFC 6532 3.2).
 */

export interface Mailbox {
  /** local@domain as written (the caller normalizes it). */
  address: string;
  /** The display name, words joined by one space, quoted strings unquoted; not yet RFC 2047-decoded. */
  name?: string;
}

type Token = { kind: 'atom' | 'quoted' | 'literal'; text: string } | { kind: 'special'; text: string };

const SPECIALS = '<>@,;:.[]';

export function parseMailboxList(value: string): Mailbox[] | { problem: string } {
  const tokens = tokenize(value);
  if ('problem' in tokens) return tokens;
  const elements: Token[][] = [[]];
  for (const t of tokens) {
    if (t.kind === 'special' && t.text === ',') elements.push([]);
    else elements[elements.length - 1].push(t);
  }
  const out: Mailbox[] = [];
  for (const el of elements) {
    const m = mailbox(el);
    if ('problem' in m) return m;
    out.push(m);
  }
  return out;
}

function mailbox(tokens: Token[]): Mailbox | { problem: string } {
  if (tokens.length === 0) return { problem: 'has an empty address in its list' };
  if (tokens.some((t) => t.kind === 'special' && (t.text === ':' || t.text === ';'))) {
    return { problem: 'uses group syntax or a source route, which is not accepted here' };
  }
  const open = tokens.findIndex((t) => t.kind === 'special' && t.text === '<');
  if (open < 0) return addrSpec(tokens);
  const close = tokens.length - 1;
  if (!(tokens[close].kind === 'special' && tokens[close].text === '>')) return { problem: 'has text after an <address>' };
  const display = tokens.slice(0, open);
  const words = display.every((t) => t.kind === 'atom' || t.kind === 'quoted' || (t.kind === 'special' && t.text === '.'));
  if (!words) return { problem: 'has a display name with characters that need quoting (such as @ or <)' };
  const spec = addrSpec(tokens.slice(open + 1, close));
  if ('problem' in spec) return spec;
  const name = display.map((t) => t.text).join(' ').replace(/ \. ?/g, '. ').trim();
  return name ? { address: spec.address, name } : spec;
}

function addrSpec(tokens: Token[]): Mailbox | { problem: string } {
  const at = tokens.findIndex((t) => t.kind === 'special' && t.text === '@');
  if (at < 0) return { problem: 'has an entry that is not an address' };
  const local = tokens.slice(0, at);
  const domain = tokens.slice(at + 1);
  const localText = local.length === 1 && local[0].kind === 'quoted' ? `"${escapeQuoted(local[0].text)}"` : dotAtom(local);
  const domainText = domain.length === 1 && domain[0].kind === 'literal' ? domain[0].text : dotAtom(domain);
  if (localText === null || domainText === null) return { problem: 'has more than one address where one is expected, or a malformed one' };
  return { address: `${localText}@${domainText}` };
}

/** atom *("." atom), or null. */
function dotAtom(tokens: Token[]): string | null {
  if (tokens.length % 2 === 0) return null;
  for (let i = 0; i < tokens.length; i++) {
    const t = tokens[i];
    const ok = i % 2 === 0 ? t.kind === 'atom' : t.kind === 'special' && t.text === '.';
    if (!ok) return null;
  }
  return tokens.map((t) => t.text).join('');
}

function escapeQuoted(text: string): string {
  return text.replace(/(["\\])/g, '\\$1');
}

function tokenize(s: string): Token[] | { problem: string } {
  const tokens: Token[] = [];
  let i = 0;
  while (i < s.length) {
    const c = s[i];
    if (c === ' ' || c === '\t' || c === '\r' || c === '\n') {
      i++;
    } else if (c === '(') {
      const end = skipComment(s, i);
      if (end < 0) return { problem: 'has an unterminated comment' };
      i = end;
    } else if (c === '"') {
      const q = readDelimited(s, i + 1, '"');
      if (!q) return { problem: 'has an unterminated quoted string' };
      tokens.push({ kind: 'quoted', text: q.text });
      i = q.end;
    } else if (c === '[') {
      const close = s.indexOf(']', i);
      if (close < 0 || /[[\\]/.test(s.slice(i + 1, close))) return { problem: 'has a malformed domain literal' };
      tokens.push({ kind: 'literal', text: s.slice(i, close + 1) });
      i = close + 1;
    } else if (SPECIALS.includes(c)) {
      tokens.push({ kind: 'special', text: c });
      i++;
    } else {
      let j = i;
      while (j < s.length && isAtext(s.charCodeAt(j))) j++;
      if (j === i) return { problem: `has a character that is not allowed here (${JSON.stringify(c)})` };
      tokens.push({ kind: 'atom', text: s.slice(i, j) });
      i = j;
    }
  }
  return tokens;
}

/** RFC 5322 3.2.3 atext, plus UTF-8 (RFC 6532 3.2). */
function isAtext(code: number): boolean {
  if (code >= 0x80) return true;
  if (code <= 0x20 || code === 0x7f) return false;
  return !'()<>[]:;@\\,."'.includes(String.fromCharCode(code));
}

/** Index after the comment that starts at `start` (comments nest, RFC 5322 3.2.2), or -1. */
function skipComment(s: string, start: number): number {
  let depth = 0;
  for (let i = start; i < s.length; i++) {
    const c = s[i];
    if (c === '\\') i++;
    else if (c === '(') depth++;
    else if (c === ')' && --depth === 0) return i + 1;
  }
  return -1;
}

/** Reads up to an unescaped `end` character; backslash escapes one character (quoted-pair). */
function readDelimited(s: string, from: number, end: string): { text: string; end: number } | null {
  let text = '';
  for (let i = from; i < s.length; i++) {
    const c = s[i];
    if (c === '\\' && i + 1 < s.length) text += s[++i];
    else if (c === end) return { text, end: i + 1 };
    else text += c;
  }
  return null;
}
