/**
 * The functions that issue 29's regex audit moved off superlinear regular expressions, each on its
 * generated worst case at the largest size its caller lets through. The inputs are what the old
 * expressions backtracked on (the attacks `recheck` reported, and runs of what each quantifier
 * accepted); the unit tests check the results at moderate sizes.
 *
 * Sizes: a send's html has no maxLength, so it is bounded by http.bodyLimit (BODY_LIMIT, 40 MiB by
 * default; a JSON string holds at most one character per byte).
 */
import { describe, expect, it } from 'vitest';
import { trackHtml, type EngagementInput } from '../../src/workers/engagement.js';
import { MiB, repeatTo, withinBudget } from '../support/worst-case.js';

const BODY_LIMIT = 40 * MiB;
/** Room for the rest of a send body around one generated field. */
const FIELD = BODY_LIMIT - 4096;

/**
 * trackHtml reads a 40 MiB document a few times (the tag scan, the body search, the copy with the
 * pixel), at about 100 ns per candidate attribute: the densest documents (` href = ` repeated, 5
 * million candidates) take it 250-500 ms here, on a worker thread. The default budget would
 * measure the machine; this one still fails by orders of magnitude on the old expression, which
 * took 5 s for 256 KiB of `<a href="x' ` and grows with the square of the size (hours at 40 MiB).
 */
const DOCUMENT_BUDGET_MS = 2_000;

/**
 * A flat string, as JSON.parse gives a field (a concatenated one would be flattened, a copy of
 * up to 40 MB, by whatever reads it first, and that is not the parse).
 */
const flat = (text: string) => Buffer.from(text, 'utf8').toString('utf8');

const ENGAGEMENT: EngagementInput = {
  baseUrl: 'https://links.example.com',
  secret: '00'.repeat(32),
  messageId: '00000000-0000-4000-8000-000000000000',
  channelId: '00000000-0000-4000-8000-000000000001',
  recipient: 'ann@example.net',
  opens: true,
  links: true,
};

/** Html bodies: runs of what the old href expression's quantifiers accepted, with no match or one at the end. */
const HTML: [string, (n: number) => string][] = [
  ['"<A\\tA" repeated with ">" at the end (recheck\'s attack)', (n) => `0${repeatTo('<A\tA', n - 2)}>`],
  ['"<a href=\\"x\' " repeated (no value is closed by its own quote)', (n) => repeatTo(`<a href="x' `, n)],
  ['"<a " repeated, then one link (every <a finds the same attribute)', (n) => `${repeatTo('<a ', n - 30)}<a href="https://e.com/">`],
  ['"<a href=\\"" and a value with no closing quote', (n) => `<a href="${repeatTo('x', n - 9)}`],
  ['"<a" and white space to the end', (n) => `<a${repeatTo(' \t\n', n - 2)}`],
  ['" href = " repeated inside one tag', (n) => `<a${repeatTo(' href = ', n - 2)}`],
  ['a link whose value is "&#" and zeros', (n) => `<a href="&#${repeatTo('0', n - 12)}">`],
  ['"</body " repeated (the open pixel\'s search)', (n) => repeatTo('</body ', n)],
];

describe(`click and open tracking on the html of a send (http.bodyLimit ${BODY_LIMIT / MiB} MiB)`, () => {
  it.each(HTML)('trackHtml: %s', (what, make) => {
    const html = flat(make(FIELD));
    const out = withinBudget(`trackHtml: ${what}`, () => trackHtml(html, ENGAGEMENT), DOCUMENT_BUDGET_MS);
    expect(out.length).toBeGreaterThan(html.length); // the pixel at least
  });
});
