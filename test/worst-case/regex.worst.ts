/**
 * The functions that issue 29's regex audit moved off superlinear regular expressions, each on its
 * generated worst case at the largest size its caller lets through. The inputs are what the old
 * expressions backtracked on (the attacks `recheck` reported, and runs of what each quantifier
 * accepted); the unit tests check the results at moderate sizes.
 *
 * Of the expressions left in src/, recheck flags only the message-too-large bounce rule
 * (`exceeded .{0,80}message size`): its gap is bounded, so it reads at most 80 characters past each
 * "exceeded ", linear with that factor (mail.worst.ts times it on remote replies).
 *
 * Sizes: a send's html has no maxLength, so it is bounded by http.bodyLimit (BODY_LIMIT, 40 MiB by
 * default; a JSON string holds at most one character per byte); an attachment's fileName at most
 * the schema's 255. A webhook URL is at most MAX_URL_LENGTH. Configuration values have no cap (the file is read whole): CONFIG_VALUE stands
 * for a broken or generated one.
 */
import { describe, expect, it } from 'vitest';
import { refineValue } from '../../src/config/refine.js';
import { parseDuration } from '../../src/domain/duration.js';
import { FieldErrorList } from '../../src/domain/errors.js';
import { linkBaseUrl } from '../../src/domain/link-hosts.js';
import { parseRetrySchedule } from '../../src/domain/retry.js';
import { normalizeAttachments } from '../../src/domain/send-rules.js';
import { trimEndOf } from '../../src/domain/trim-end.js';
import { MAX_URL_LENGTH, WebhookTargets } from '../../src/webhooks/targets.js';
import { trackHtml, type EngagementInput } from '../../src/workers/engagement.js';
import { MiB, repeatTo, withinBudget, withinBudgetAsync } from '../support/worst-case.js';

const BODY_LIMIT = 40 * MiB;
/** Room for the rest of a send body around one generated field. */
const FIELD = BODY_LIMIT - 4096;
const CONFIG_VALUE = MiB;

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
  ['"</body " repeated (the open pixel\'s search)', (n) => repeatTo('</body ', n)],  // Not a regex: each link costs a URL parse and a signature, so a body of nothing but real links
  // took 16 s before MAX_TRACKED_LINKS; past the cap they are copied as they are.
  ['real links, 1.7 million of them (only the first MAX_TRACKED_LINKS are signed)', (n) => repeatTo('<a href="https://e.com/">x</a>', n)],
];

describe(`click and open tracking on the html of a send (http.bodyLimit ${BODY_LIMIT / MiB} MiB)`, () => {
  it.each(HTML)('trackHtml: %s', (what, make) => {
    const html = flat(make(FIELD));
    const out = withinBudget(`trackHtml: ${what}`, () => trackHtml(html, ENGAGEMENT), DOCUMENT_BUDGET_MS);
    expect(out.length).toBeGreaterThan(html.length); // the pixel at least
  });
});

/** A run of `ch` that does not end the text: what `/[ch]+$/` tried from each of its characters. */
const runThenX = (ch: string, n: number) => `${repeatTo(ch, n - 1)}x`;

describe('trailing runs trimmed by index (trimEndOf), at the sizes their callers let through', () => {
  it('trimEndOf itself on a 40 MiB run that does not end the text', () => {
    const s = flat(runThenX('/', BODY_LIMIT));
    expect(withinBudget('trimEndOf', () => trimEndOf(s, '/'))).toBe(s);
  });

  it("an attachment's file name, at the schema's 255 characters", () => {
    // /[. ]+$/ took well under a millisecond at this size: the case keeps the rule cheap if the
    // cap moves (trimEndOf itself is timed at 40 MiB above).
    for (const unit of [' ', '.', '. ']) {
      const fileName = `a.exe${runThenX(unit, 250)}`;
      const errors = new FieldErrorList();
      withinBudget(`fileName of ${JSON.stringify(unit)} runs`, () => normalizeAttachments([{ content: 'YQ==', fileName }], '/attachments', errors));
    }
  });

  it('publicUrl and the base URLs derived from it, in configuration', () => {
    const url = `https://e.com/${runThenX('/', CONFIG_VALUE)}`;
    withinBudget('httpUrl refiner', () => refineValue('httpUrl', url));
    withinBudget('linkBaseUrl', () => linkBaseUrl(url, undefined, 'tracking'));
  });

  it("a webhook URL's host with a run of dots, as long as the URL may be", async () => {
    const host = `${'.'.repeat(MAX_URL_LENGTH)}x.localhost`;
    const targets = new WebhookTargets({ allowHttp: true, allowPrivate: true });
    // Under localhost: answered without a DNS lookup, so only the name's own reading is timed.
    const r = await withinBudgetAsync('webhook host', () => targets.resolve(host));
    expect(r.ok).toBe(true);
  });
});

/** The message `f` throws (inside the timed call, so that the budget is checked for a refusal too). */
function thrown(f: () => unknown): string | undefined {
  try {
    f();
    return undefined;
  } catch (err) {
    return (err as Error).message;
  }
}

describe('durations and retry schedules in configuration', () => {
  // recheck's attacks on the old expressions: white space between two digits, where nothing can end the match.
  it.each([' ', '\t', ' \t\n'])('parseDuration and parseRetrySchedule on a run of %j', (unit) => {
    const run = repeatTo(unit, CONFIG_VALUE - 2);
    expect(withinBudget('parseDuration', () => thrown(() => parseDuration(`0${run}0`)))).toMatch(/is not a duration/);
    expect(withinBudget('parseRetrySchedule', () => thrown(() => parseRetrySchedule(`0${run}0`)))).toMatch(/is not a duration/);
    expect(withinBudget('parseRetrySchedule with a star', () => parseRetrySchedule(`5m${run}*${run}3`)).steps).toHaveLength(3);
  });
});
