/**
 * The href scanner of click tracking (src/workers/href-attributes.ts) against the expression it
 * replaces: the same matches on random HTML, and the results on the inputs that made the
 * expression backtrack, at sizes where it still finishes (its time at the API's body limit is
 * test/worst-case/regex.worst.ts's business).
 */
import { describe, expect, it } from 'vitest';
import { replaceHrefs } from '../../src/workers/href-attributes.js';
import { rng } from '../support/random.js';

/** The expression src/workers/engagement.ts used before issue 29: the reference for the results. */
const OLD_HREF = /(<a\b[^>]*?\shref\s*=\s*)(["'])([^"']*)\2/gi;

const mark = (start: string, quote: string, value: string) => `[${start}|${quote}|${value}]`;
const byScanner = (html: string) => replaceHrefs(html, (m) => mark(m.start, m.quote, m.value));
const byOldExpression = (html: string) => html.replace(OLD_HREF, (_whole, start: string, quote: string, value: string) => mark(start, quote, value));

/** The pieces that matter to the expression, so that random strings hit its corner cases often. */
const PIECES = [
  ...['<a', '<A', '<ab', '<a_', '<', 'a', ' ', '\t', '\n', '\u00a0', '\u2028', 'href', 'HrEf', 'hre', '=', '"', "'", '>', 'x', 'https://e.com/?a=1&amp;b'],
  ...[' href="', " href='", '\tHREF = "', ' href=', '<a href="', "<a x='y' href='"],
];

describe('replaceHrefs', () => {
  it('finds what the old expression found on 30,000 random fragments of HTML', () => {
    const next = rng(29);
    for (let n = 0; n < 30_000; n++) {
      const parts: string[] = [];
      const length = Math.floor(next() * 24);
      for (let i = 0; i < length; i++) parts.push(PIECES[Math.floor(next() * PIECES.length)]);
      const html = parts.join('');
      expect(byScanner(html), JSON.stringify(html)).toBe(byOldExpression(html));
    }
  });

  it('reads ordinary links: both quotes, any case, white space around =, other attributes first', () => {
    const html = `<p><A class="b" HREF = 'https://e.com/a'>a</A> <a\nhref="https://e.com/b?x=1&amp;y=2" id=c>b</a><a name="x">no href</a></p>`;
    expect(byScanner(html)).toBe(
      `<p>[<A class="b" HREF = |'|https://e.com/a]>a</A> [<a\nhref=|"|https://e.com/b?x=1&amp;y=2] id=c>b</a><a name="x">no href</a></p>`,
    );
    expect(byScanner(html)).toBe(byOldExpression(html));
  });

  it('leaves unquoted values, <abbr> and an href after the end of the tag alone', () => {
    const html = '<a href=https://e.com/>x</a><abbr href="y">z</abbr><a title="t">w</a> href="u"';
    expect(byScanner(html)).toBe(html);
    expect(byOldExpression(html)).toBe(html);
  });

  it('gives the old results on the inputs that made the old expression backtrack', () => {
    const tabs = `0${'<A\tA'.repeat(4_000)}>`;
    expect(byScanner(tabs)).toBe(tabs);
    expect(byScanner(tabs)).toBe(byOldExpression(tabs));

    // Each value ends at the other kind of quote, so no attribute matches and every <a looks further.
    const unclosed = `<a href="x' `.repeat(4_000);
    expect(byScanner(unclosed)).toBe(unclosed);
    expect(byScanner(unclosed)).toBe(byOldExpression(unclosed));

    // Every <a before the first '>' finds the same attribute far to the right: the first <a takes it.
    const sharing = `${'<a '.repeat(4_000)}<a href="https://e.com/">`;
    expect(byScanner(sharing)).toBe(`[${'<a '.repeat(4_000)}<a href=|"|https://e.com/]>`);
    expect(byScanner(sharing)).toBe(byOldExpression(sharing));
  });
});
