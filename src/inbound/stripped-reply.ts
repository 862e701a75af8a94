/**
 * The new text of a reply: what the writer typed, without the message it quotes.
 *
 * Mail clients quote in two ways, often both: an attribution line followed by the earlier
 * message ("On Mon, 6 May 2024, Ann <ann@example.org> wrote:", Outlook's "-----Original
 * Message-----" or its "From: …" block under a rule), and lines prefixed with ">" (RFC 3676
 * 4.5). Everything from the first attribution on is the quoted message; of what comes before,
 * the ">" lines are quotes too (an answer written between quoted lines keeps only its own lines).
 *
 * Linear in the text: each line is looked at once, against anchored patterns without nested
 * quantifiers; an attribution may be wrapped over two lines (Gmail wraps long ones), so a line
 * is also tried joined with the next.
 */

/** Attribution lines, in the languages mail clients most often write them in. */
const ATTRIBUTIONS: readonly RegExp[] = [
  /^On\b.{0,400}\bwrote:$/i, // Gmail, Apple Mail, Thunderbird
  /^Am\b.{0,400}\bschrieb\b.{0,200}:$/i, // German
  /^Le\b.{0,400}\ba écrit\s?:$/i, // French
  /^El\b.{0,400}\bescribió:$/i, // Spanish
  /^Il giorno\b.{0,400}\bha scritto:$/i, // Italian
  /^Op\b.{0,400}\bschreef\b.{0,200}:$/i, // Dutch
  /^-{2,}\s*Original Message\s*-{2,}$/i, // Outlook
  /^-{2,}\s*Ursprüngliche Nachricht\s*-{2,}$/i,
  /^-{2,}\s*Forwarded message\s*-{2,}$/i,
];

/** Outlook's quote: a rule of underscores, then the earlier message's "From:" line. */
const OUTLOOK_RULE = /^_{10,}$/;
const FROM_LINE = /^(From|Von|De|Da|Van):\s/i;

/**
 * How much of the text is looked at: the new text of a reply is at its top, and a reply that
 * quotes nothing within its first MiB is treated as all new text up to there. Linear is not
 * enough for a 40 MiB text part on the main thread (about 65 ms per MiB of short lines).
 */
export const MAX_REPLY_SCAN = 1024 * 1024;

/** Longest line tried against the patterns: attributions are short, a longer line is text. */
const MAX_ATTRIBUTION_LENGTH = 1000;

/** Whether any attribution pattern matches `line` (trimmed); only lines ending as one can are tried. */
function matchesAttribution(line: string): boolean {
  const last = line[line.length - 1];
  return (last === ':' || last === '-') && line.length <= MAX_ATTRIBUTION_LENGTH && ATTRIBUTIONS.some((pattern) => pattern.test(line));
}

function isAttribution(line: string, next: string | undefined): boolean {
  const here = line.trim();
  if (here.length === 0 || here.length > MAX_ATTRIBUTION_LENGTH) return false;
  if (here[0] === '_') return OUTLOOK_RULE.test(here) && next !== undefined && FROM_LINE.test(next.trim());
  if (matchesAttribution(here)) return true;
  // A wrapped attribution: "On …, Ann <" / "ann@example.org> wrote:".
  return next !== undefined && matchesAttribution(`${here} ${next.trim()}`);
}

/**
 * `text` without its quoted part: the lines before the first attribution, less those quoted
 * with ">", trailing blank lines dropped. A message that quotes nothing comes back trimmed of
 * trailing white space (and cut at the last line break within MAX_REPLY_SCAN); '' when the
 * reply is all quote.
 */
export function strippedTextReply(text: string): string {
  const cut = text.length <= MAX_REPLY_SCAN ? text.length : text.lastIndexOf('\n', MAX_REPLY_SCAN);
  const scanned = text.slice(0, cut > 0 ? cut : MAX_REPLY_SCAN);
  const lines = scanned.split(/\r?\n/);
  const kept: string[] = [];
  for (let i = 0; i < lines.length; i++) {
    if (isAttribution(lines[i], lines[i + 1])) break;
    if (!/^\s*>/.test(lines[i])) kept.push(lines[i]);
  }
  // trimEnd, not replace(/\s+$/): that expression is quadratic in a run of white space that does
  // not end the text (domain/trim-end.ts).
  return kept.join('\n').trimEnd();
}
