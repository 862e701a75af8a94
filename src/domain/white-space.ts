/**
 * Character tests for the hand-written scanners that read untrusted mail text (issue 29: a
 * regular expression whose quantifiers overlap rescans its input and can hold the event loop for
 * minutes; a scanner looks at each character a bounded number of times).
 */

/**
 * Whether a UTF-16 code unit is white space as `\s` and String.prototype.trim see it (ECMA-262
 * WhiteSpace and LineTerminator), so that a scanner agrees with the expression it replaces.
 */
export function isWhiteSpace(c: number): boolean {
  if (c === 0x20 || (c >= 0x09 && c <= 0x0d)) return true;
  if (c < 0xa0) return false;
  return (
    c === 0xa0 || c === 0x1680 || (c >= 0x2000 && c <= 0x200a) || c === 0x2028 || c === 0x2029 || c === 0x202f || c === 0x205f || c === 0x3000 || c === 0xfeff
  );
}

/** A line terminator, where `.` stops and a multiline `$` matches (ECMA-262 LineTerminator). */
export function isLineTerminator(c: number): boolean {
  return c === 0x0a || c === 0x0d || c === 0x2028 || c === 0x2029;
}

/** A space or a tab (RFC 5322 WSP). */
export function isBlank(c: number): boolean {
  return c === 0x20 || c === 0x09;
}

/**
 * `s` without the spaces and tabs at either end (RFC 5234 B.1 WSP), by index. Not
 * `s.replace(/^[ \t]+|[ \t]+$/g, '')`: its second alternative is tried at every position of a run
 * of WSP that does not reach the end and scans the rest of that run each time (60,000 spaces in
 * an MTA-STS record's field held the event loop for seconds). Not `s.trim()` either: that strips
 * every Unicode white space and line terminator, which ABNF such as RFC 8461's does not.
 */
export function trimBlanks(s: string): string {
  let start = 0;
  let end = s.length;
  while (start < end && isBlank(s.charCodeAt(start))) start++;
  while (end > start && isBlank(s.charCodeAt(end - 1))) end--;
  return start === 0 && end === s.length ? s : s.slice(start, end);
}

/** `s` without the spaces and tabs at its end (what `/[ \t]+$/` removes, without rescanning a run of them). */
export function trimBlanksEnd(s: string): string {
  let end = s.length;
  while (end > 0 && isBlank(s.charCodeAt(end - 1))) end--;
  return end === s.length ? s : s.slice(0, end);
}

/** A space or tab before a line terminator or at the end: what trimLineEndBlanks removes (not multiline: `$` is the end). */
const LINE_END_BLANK = /[\t ](?:[\n\r\u2028\u2029]|$)/;

/**
 * `s` with the spaces and tabs before each line terminator and at its end removed: what
 * `s.replace(/[\t ]+$/gm, '')` gives, in one pass (that expression rescans a run of blanks that
 * does not end a line from each of its characters, quadratic in the run).
 */
export function trimLineEndBlanks(s: string): string {
  // Nearly always nothing to remove (a quoted-printable encoder writes a line's last blank as
  // =20): one native scan says so, where the loop below looks at every character in JavaScript
  // (about 6 µs of the main thread for the two parts of a 2 KB message; bench/RESULTS.md, issue
  // 36). The expression reads each position once: a blank, then one character or the end.
  if (!LINE_END_BLANK.test(s)) return s;
  const kept: string[] = [];
  let copied = 0;
  for (let i = 0; i < s.length; ) {
    if (!isBlank(s.charCodeAt(i))) {
      i++;
      continue;
    }
    const run = i;
    while (i < s.length && isBlank(s.charCodeAt(i))) i++;
    if (i === s.length || isLineTerminator(s.charCodeAt(i))) {
      kept.push(s.slice(copied, run));
      copied = i;
    }
  }
  kept.push(s.slice(copied));
  return kept.join('');
}
