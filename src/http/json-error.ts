/**
 * Where a JSON text that JSON.parse refused goes wrong, and what was expected there (issue 30):
 * "Unexpected '}' at line 3, column 5: expected a property name in double quotes". JSON.parse's
 * own messages differ between V8 versions and some quote the text itself (a body may hold
 * secrets), so the grammar of RFC 8259 is walked here once more, on the error path only.
 *
 * The walk is iterative (an explicit stack, no recursion) and looks at each character once, so
 * it is linear in the text like json-scan.ts; it stops at the first error. Line and column are
 * counted from the offset only when an error is found (lines end at LF, RFC 8259 section 2
 * allows CR, LF, tab and space as white space; columns count UTF-16 code units from 1).
 */

export interface JsonSyntaxError {
  /** Index in the text (UTF-16 code units) of the character at fault, or the text's length at its end. */
  offset: number;
  line: number;
  column: number;
  /** What was found: a quoted character, or "end of input". */
  found: string;
  /** What the grammar allowed there, in words. */
  expected: string;
}

/** What may come next (RFC 8259 sections 2 to 7). */
type Expect = 'value' | 'valueOrClose' | 'key' | 'keyOrClose' | 'colon' | 'commaOrClose' | 'end';

const EXPECTED: Record<Expect, string> = {
  value: 'a value (an object, array, string, number, true, false or null)',
  valueOrClose: "a value or ']'",
  key: 'a property name in double quotes',
  keyOrClose: "a property name in double quotes or '}'",
  colon: "':' after the property name",
  commaOrClose: "',' or the container's close", // said with the bracket: commaOrClose()
  end: 'nothing after the JSON value',
};

const NUMBER = /-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?/y;
const HEX4 = /[0-9A-Fa-f]{4}/y;
const ESCAPES = '"\\/bfnrtu';

/** A character as the message shows it: quoted when printable, U+XXXX otherwise. */
function shown(text: string, i: number): string {
  if (i >= text.length) return 'end of input';
  const cp = text.codePointAt(i)!;
  if (cp < 0x20 || cp === 0x7f || (cp >= 0x80 && cp < 0xa0)) return `character U+${cp.toString(16).toUpperCase().padStart(4, '0')}`;
  return `'${String.fromCodePoint(cp)}'`;
}

function isBlank(c: number): boolean {
  return c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d;
}

function at(text: string, offset: number, expected: string): JsonSyntaxError {
  let line = 1;
  let lineStart = 0;
  // A plain loop up to the offset: text.indexOf('\n') turned quadratic in V8 once optimized for
  // short texts (1 MiB without a line feed took seconds after a warm-up on small bodies).
  for (let i = 0; i < offset; i++) {
    if (text.charCodeAt(i) === 0x0a) {
      line++;
      lineStart = i + 1;
    }
  }
  return { offset, line, column: offset - lineStart + 1, found: shown(text, offset), expected };
}

/** The end of the string opening at `start` (the index after its closing quote), or its error. */
function stringEnd(text: string, start: number): number | JsonSyntaxError {
  for (let i = start + 1; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22) return i + 1;
    if (c < 0x20) return at(text, i, 'no control character in a string (escape it, as \\n or \\u0000)');
    if (c === 0x5c) {
      const e = text[i + 1];
      if (e === undefined) break;
      if (!ESCAPES.includes(e)) return at(text, i + 1, 'an escape: one of \\" \\\\ \\/ \\b \\f \\n \\r \\t or \\u and four hex digits');
      if (e === 'u') {
        HEX4.lastIndex = i + 2;
        if (!HEX4.test(text)) return at(text, i + 2, 'four hex digits after \\u');
        i += 4;
      }
      i++;
    }
  }
  return at(text, text.length, "'\"' to close the string");
}

/** The index after the literal `word` at `i`, or the error at its first wrong character. */
function literalEnd(text: string, i: number, word: string): number | JsonSyntaxError {
  for (let k = 0; k < word.length; k++) {
    if (text[i + k] !== word[k]) return at(text, i + k, `'${word[k]}' (of ${word})`);
  }
  return i + word.length;
}

/** Where the walk is: the next index, what may come there, the open '{' and '[' (char codes). */
interface Walk {
  i: number;
  expect: Expect;
  open: number[];
}

/** After a value: the end of the text at the top level, else a comma or the container's close. */
function afterValue(w: Walk): void {
  w.expect = w.open.length === 0 ? 'end' : 'commaOrClose';
}

/** Closes the innermost container when `c` is its close; false otherwise. */
function close(w: Walk, c: number): boolean {
  const top = w.open[w.open.length - 1];
  if (!((c === 0x7d && top === 0x7b) || (c === 0x5d && top === 0x5b))) return false;
  w.open.pop();
  w.i++;
  afterValue(w);
  return true;
}

/** Reads the value starting at w.i (after `{`/`[` only the bracket itself); an error or null. */
function value(text: string, w: Walk, c: number): JsonSyntaxError | null {
  if (c === 0x7b || c === 0x5b) {
    w.open.push(c);
    w.i++;
    w.expect = c === 0x7b ? 'keyOrClose' : 'valueOrClose';
    return null;
  }
  let end: number | JsonSyntaxError;
  if (c === 0x22) end = stringEnd(text, w.i);
  else if (c === 0x74) end = literalEnd(text, w.i, 'true');
  else if (c === 0x66) end = literalEnd(text, w.i, 'false');
  else if (c === 0x6e) end = literalEnd(text, w.i, 'null');
  else if (c === 0x2d || (c >= 0x30 && c <= 0x39)) {
    NUMBER.lastIndex = w.i;
    end = NUMBER.test(text) ? NUMBER.lastIndex : at(text, w.i + 1, 'a digit');
  } else return at(text, w.i, EXPECTED.value);
  if (typeof end !== 'number') return end;
  w.i = end;
  afterValue(w);
  return null;
}

/** One step of the walk at the character `c` (not white space); an error or null. */
function step(text: string, w: Walk, c: number): JsonSyntaxError | null {
  switch (w.expect) {
    case 'end':
      return at(text, w.i, EXPECTED.end);
    case 'colon':
      if (c !== 0x3a) return at(text, w.i, EXPECTED.colon);
      w.i++;
      w.expect = 'value';
      return null;
    case 'commaOrClose':
      if (c === 0x2c) {
        w.i++;
        w.expect = w.open[w.open.length - 1] === 0x7b ? 'key' : 'value';
        return null;
      }
      return close(w, c) ? null : at(text, w.i, commaOrClose(w));
    case 'key':
    case 'keyOrClose': {
      if (w.expect === 'keyOrClose' && close(w, c)) return null;
      if (c !== 0x22) return at(text, w.i, EXPECTED[w.expect]);
      const end = stringEnd(text, w.i);
      if (typeof end !== 'number') return end;
      w.i = end;
      w.expect = 'colon';
      return null;
    }
    case 'value':
    case 'valueOrClose':
      if (w.expect === 'valueOrClose' && close(w, c)) return null;
      if (w.expect === 'valueOrClose' && !(c === 0x7b || c === 0x5b || c === 0x22 || c === 0x2d || (c >= 0x30 && c <= 0x39) || c === 0x74 || c === 0x66 || c === 0x6e)) {
        return at(text, w.i, EXPECTED.valueOrClose);
      }
      return value(text, w, c);
  }
}

function commaOrClose(w: Walk): string {
  return w.open[w.open.length - 1] === 0x7b ? "',' or '}'" : "',' or ']'";
}

/** The first syntax error of `text` as JSON (RFC 8259), or null when there is none. */
export function jsonSyntaxError(text: string): JsonSyntaxError | null {
  const w: Walk = { i: 0, expect: 'value', open: [] };
  for (;;) {
    while (w.i < text.length && isBlank(text.charCodeAt(w.i))) w.i++;
    if (w.i >= text.length) {
      if (w.expect === 'end') return null;
      return at(text, w.i, w.expect === 'commaOrClose' ? commaOrClose(w) : EXPECTED[w.expect]);
    }
    const error = step(text, w, text.charCodeAt(w.i));
    if (error) return error;
  }
}

/** The detail of a 400 invalid_json: where the text goes wrong and what was expected there. */
export function describeJsonError(text: string): string {
  const e = jsonSyntaxError(text);
  if (!e) return 'The body is not valid JSON';
  return `The body is not valid JSON: unexpected ${e.found} at line ${e.line}, column ${e.column} (offset ${e.offset}); expected ${e.expected}`;
}
