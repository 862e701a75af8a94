/**
 * The quoted href attributes of `<a>` start tags, found in time linear in the HTML (issue 29).
 *
 * This reads what `/(<a\b[^>]*?\shref\s*=\s*)(["'])([^"']*)\2/gi` matched, match for match (the
 * unit tests compare the two on random HTML). That expression tried every `<a` again over the rest
 * of its tag, and over the rest of the document when the tag had no `>`, so a client's html of
 * `<a\t` or `<a href="x' ` repeated held the worker thread for seconds at 100 KB and for hours at
 * the API's 40 MiB body limit, and every message queued behind it on that thread waited.
 *
 * The expression, read as a scanner: a match starts at `<a` (any case) not followed by a word
 * character, at the first `<a` from which one matches. It takes the first white-space character q
 * after the `a` with no `>` between the `a` and q such that q is followed by `href` (any case),
 * white space, `=`, white space, a quote, characters that are no quote, and the same quote again
 * (the "attribute at q"). Whether there is an attribute at q does not depend on the `<a`, so each q
 * is looked at once, from left to right, and each `<a` asks for the first attribute in its tag.
 */
import { isWhiteSpace } from '../domain/white-space.js';

export interface HrefMatch {
  /** The matched text, from `<a` to the closing quote. */
  whole: string;
  /** From `<a` to just before the opening quote (the expression's first group). */
  start: string;
  quote: string;
  /** Between the quotes, undecoded. */
  value: string;
}

/**
 * `html` with each match replaced by what `rewrite` returns for it (`String.replace` with a
 * callback); `null` stops there: that match and every later one stay as written, unread.
 */
export function replaceHrefs(html: string, rewrite: (m: HrefMatch) => string | null): string {
  const attributes = new Attributes(html);
  const closers = new Occurrences(html, '>');
  const out: string[] = [];
  let copied = 0;
  for (let p = html.indexOf('<'); p >= 0; ) {
    if (!isAnchorStart(html, p)) {
      p = html.indexOf('<', p + 1);
      continue;
    }
    const tagEnd = closers.firstFrom(p + 2);
    const attr = attributes.firstFrom(p + 2, tagEnd);
    if (attr === undefined) {
      // Every other <a before tagEnd would look in the same tag, where there is no attribute.
      p = tagEnd < html.length ? html.indexOf('<', tagEnd + 1) : -1;
      continue;
    }
    const start = html.slice(p, attr.quoteAt);
    const value = html.slice(attr.quoteAt + 1, attr.closeAt);
    const replaced = rewrite({ whole: html.slice(p, attr.closeAt + 1), start, quote: html[attr.quoteAt], value });
    if (replaced === null) break; // this one and the rest stay as written, unread
    out.push(html.slice(copied, p), replaced);
    copied = attr.closeAt + 1;
    p = html.indexOf('<', copied); // a match never overlaps the one before it
  }
  if (copied === 0) return html;
  out.push(html.slice(copied));
  return out.join('');
}

/** `<a` or `<A` at p, then the end or a character that is not a word character (`\b` without the u flag). */
function isAnchorStart(s: string, p: number): boolean {
  const a = s.charCodeAt(p + 1);
  if (a !== 0x61 && a !== 0x41) return false;
  return p + 2 >= s.length || !isWordChar(s.charCodeAt(p + 2));
}

function isWordChar(c: number): boolean {
  return (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a) || c === 0x5f;
}

interface Attribute {
  /** The white-space character before `href`. */
  at: number;
  quoteAt: number;
  closeAt: number;
}

/**
 * The first attribute that starts in [from, before), for `from` that never decreases: each `href`
 * is tested once, and the tests of different ones read disjoint text (a value ends at the first
 * quote after its opening one, and two attributes cannot share an opening quote), so the walk over
 * a whole document is linear. `href` and the closing quote are found by the regular expression
 * engine (a literal and a class, which cannot backtrack): a loop over each character in script is
 * several times slower at 40 MiB.
 */
class Attributes {
  private readonly names = /href/gi;
  private readonly quotes = /["']/g;
  /** The first `href` at or after `searchedFrom` (the text's length when there is none). */
  private name = -1;
  private searchedFrom = -1;

  constructor(private readonly s: string) {}

  firstFrom(from: number, before: number): Attribute | undefined {
    for (let h = this.nameFrom(from + 1); h <= before && h < this.s.length; h = this.nameFrom(h + 1)) {
      const attr = this.attributeAt(h - 1);
      if (attr !== undefined) return attr;
    }
    return undefined;
  }

  /**
   * The first `href` at or after `from`, searched again only once `from` has passed the last one
   * found: asked for by every `<a` of a document, the same far one is found once.
   */
  private nameFrom(from: number): number {
    if (this.name < from) {
      this.names.lastIndex = from;
      // test, not exec: no match array for each of millions of candidates; lastIndex is the end.
      this.name = this.names.test(this.s) ? this.names.lastIndex - 4 : this.s.length;
    }
    return this.name;
  }

  /** `\shref\s*=\s*(["'])([^"']*)\2` at q, where `href` follows q, or undefined. */
  private attributeAt(q: number): Attribute | undefined {
    const s = this.s;
    if (!isWhiteSpace(s.charCodeAt(q))) return undefined;
    let i = skipWhiteSpace(s, q + 5);
    if (s.charCodeAt(i) !== 0x3d) return undefined; // =
    i = skipWhiteSpace(s, i + 1);
    const quote = s.charCodeAt(i);
    if (quote !== 0x22 && quote !== 0x27) return undefined;
    this.quotes.lastIndex = i + 1;
    const close = this.quotes.test(s) ? this.quotes.lastIndex - 1 : -1;
    return close >= 0 && s.charCodeAt(close) === quote ? { at: q, quoteAt: i, closeAt: close } : undefined;
  }
}

function skipWhiteSpace(s: string, i: number): number {
  while (i < s.length && isWhiteSpace(s.charCodeAt(i))) i++;
  return i;
}

/**
 * The first `ch` at or after a position (or the end of the text), for positions that never
 * decrease: searched again only once the position has passed the last one found, so the text is
 * searched once in all, however many `<a` ask for the same far one.
 */
class Occurrences {
  private at = -1;

  constructor(
    private readonly s: string,
    private readonly ch: string,
  ) {}

  firstFrom(from: number): number {
    if (this.at < from) {
      const i = this.s.indexOf(this.ch, from);
      this.at = i < 0 ? this.s.length : i;
    }
    return this.at;
  }
}
