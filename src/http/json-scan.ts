/**
 * One linear pass over a JSON body's text that runs before JSON.parse (issue 29), so that what a
 * body may cost is known before anything is built from it:
 *
 * - caps: nesting deeper than MAX_BODY_DEPTH (422 `max_depth`), an object with more than
 *   MAX_KEYS_PER_OBJECT keys (422 `max_properties`), more JSON values in all than the caller's
 *   cap (413 payload_too_large). The first cap crossed ends the scan, in the time it took to
 *   reach it: 40 MiB of `[[[[` is refused after 33 characters, 40 MiB of tiny keys after 10,000.
 * - keys (issue 18): a key twice in one object (`duplicate`) instead of the last one silently
 *   winning, and `__proto__`, or `prototype` inside `constructor` (`reserved`): such keys change an
 *   object's prototype when copied by assignment (prototype pollution). Collected, and reported by
 *   the caller only once JSON.parse accepted the text (a text that is not JSON is invalid_json).
 *
 * Strings are skipped with indexOf, everything else is looked at once: time and memory are
 * linear in the part of the text scanned, whatever the text (it need not be JSON).
 */
import { AppError, FieldErrorList, pointerSegment } from '../domain/errors.js';

/** Deepest nesting of objects and arrays a JSON body may have (template data included). */
export const MAX_BODY_DEPTH = 32;

/**
 * Most keys one JSON object may have. The widest object a request needs is template `data`
 * (metadata allows 10, headers 50); ten thousand keys is far beyond any template and keeps the
 * key sets the scan holds (one per open object) small.
 */
export const MAX_KEYS_PER_OBJECT = 10_000;

/** The least cap on JSON values per body: enough for every body but the largest broadcasts. */
export const MIN_MAX_BODY_VALUES = 1_000_000;

/**
 * JSON values a broadcast entry is allowed on average (its recipients, tags, metadata and template
 * data together): the values cap grows with limits.broadcastMessages, so that a broadcast the
 * configuration allows is never refused for its value count.
 */
export const VALUES_PER_BROADCAST_ENTRY = 100;

/** The cap on JSON values in one body for a configured limits.broadcastMessages. */
export function maxBodyValues(broadcastMessages: number): number {
  return Math.max(MIN_MAX_BODY_VALUES, broadcastMessages * VALUES_PER_BROADCAST_ENTRY);
}

/** What the scan learned of a text; null from scanJson when the text cannot be JSON. */
export interface JsonScan {
  /** JSON values in the text (objects, arrays and scalars, the root included). */
  values: number;
  /** Duplicate and prototype-changing keys, by JSON pointer. */
  keyProblems: FieldErrorList;
}

interface Frame {
  isObject: boolean;
  /**
   * Objects: the keys seen before the current one, made at the second key (most objects are
   * small or empty): a list searched in place up to SMALL_OBJECT keys, a set beyond.
   */
  keys: string[] | Set<string> | null;
  /** Keys read in this object, duplicates included. */
  keyCount: number;
  /** Objects: a string now is a key (after `{` or `,`). */
  expectKey: boolean;
  /** Objects: the key whose value is being read. */
  key: string;
  /** Arrays: the index of the value being read. */
  index: number;
}

const OPEN_OBJECT = 123; // {
const OPEN_ARRAY = 91; // [
const CLOSE_OBJECT = 125; // }
const CLOSE_ARRAY = 93; // ]
const COMMA = 44;
const COLON = 58;
const QUOTE = 34;
const BACKSLASH = 92;

/** Whether `c` continues a run of scalar text (anything but structure, a quote or whitespace). */
function isScalarChar(c: number): boolean {
  return c > 32 && c !== OPEN_OBJECT && c !== OPEN_ARRAY && c !== CLOSE_OBJECT && c !== CLOSE_ARRAY && c !== COMMA && c !== COLON && c !== QUOTE;
}

/**
 * The scan's regular expressions (sticky: each matches at lastIndex or not at all). Each call of
 * scanJson makes its own, as they carry lastIndex; none can backtrack: a run is one character
 * class, and an escape-heavy string is read at most 1,000 escapes per match, so that the
 * engine's backtrack stack stays small (an unbounded `(?:\\.[^"\\]*)*` overflows it at 40 MiB).
 */
function patterns() {
  return {
    /** Whitespace (and the control characters JSON.parse will refuse). */
    blank: /[\x00-\x20]*/y,
    /** The rest of a number, true, false or null (or of text JSON.parse will refuse). */
    scalar: /[^\x00-\x20{}[\],:"]*/y,
    /** String content up to a quote, a backslash that starts the 1,001st escape, or the end. */
    stringBody: /[^"\\]*(?:\\[\s\S][^"\\]*){0,1000}/y,
  };
}

type Patterns = ReturnType<typeof patterns>;

/** lastIndex of `re` after matching it at `from` (it always matches, if only the empty string). */
function skip(re: RegExp, text: string, from: number): number {
  re.lastIndex = from;
  re.exec(text);
  return re.lastIndex;
}

/** Index of the quote that closes the string opening at `start`, or -1 when none does. */
function stringEnd(text: string, start: number, re: Patterns): number {
  const quote = text.indexOf('"', start + 1);
  if (quote < 0) return -1;
  // The common string: no backslash right before its first quote, so that quote closes it.
  if (text.charCodeAt(quote - 1) !== BACKSLASH) return quote;
  let j = start + 1;
  for (;;) {
    j = skip(re.stringBody, text, j);
    const c = text.charCodeAt(j);
    if (c === QUOTE) return j;
    if (c !== BACKSLASH || j + 1 >= text.length) return -1;
  }
}

/** JSON pointer of the value being read in the top frame (`upTo` frames counted). */
function pointerOf(stack: Frame[], upTo = stack.length): string {
  let p = '';
  for (let k = 0; k < upTo; k++) p += '/' + pointerSegment(stack[k].isObject ? stack[k].key : stack[k].index);
  return p;
}

/** The cap errors: each ends the scan at once. */
function tooDeep(stack: Frame[]): AppError {
  return new AppError('validation_failed', 'The request body is nested too deeply', {
    errors: { [pointerOf(stack) || '/']: [{ code: 'max_depth', message: `must not be nested more than ${MAX_BODY_DEPTH} levels deep` }] },
  });
}

function tooManyKeys(stack: Frame[]): AppError {
  return new AppError('validation_failed', `An object in the request body has more than ${MAX_KEYS_PER_OBJECT} keys`, {
    errors: { [pointerOf(stack, stack.length - 1) || '/']: [{ code: 'max_properties', message: `must not have more than ${MAX_KEYS_PER_OBJECT} keys` }] },
  });
}

function tooManyValues(maxValues: number): AppError {
  return new AppError('payload_too_large', `The body has more than ${maxValues} JSON values`);
}

/** Keys an object may have before its keys go from a list to a set. */
const SMALL_OBJECT = 16;

/** Records `key` as the key now read in the object `top`; true when it had it already. */
function rememberKey(top: Frame, key: string): boolean {
  let seen = false;
  if (top.keyCount === 2) top.keys = [top.key]; // the first key, still in top.key
  else if (top.keyCount === SMALL_OBJECT + 1) top.keys = new Set(top.keys as string[]);
  const keys = top.keys;
  if (Array.isArray(keys)) {
    seen = keys.includes(key);
    keys.push(key);
  } else if (keys) {
    seen = keys.has(key);
    keys.add(key);
  }
  top.key = key;
  return seen;
}

/** Reads the key the string at start..end is, checks it, and records it in the object `top`. */
function readKey(text: string, start: number, end: number, stack: Frame[], problems: FieldErrorList): boolean {
  const top = stack[stack.length - 1];
  const raw = text.slice(start + 1, end);
  let key = raw;
  if (raw.includes('\\')) {
    try {
      key = JSON.parse(text.slice(start, end + 1)) as string;
    } catch {
      return false;
    }
  }
  if (++top.keyCount > MAX_KEYS_PER_OBJECT) throw tooManyKeys(stack);
  const parent = stack.length > 1 ? stack[stack.length - 2] : undefined;
  const seen = rememberKey(top, key);
  // Past the listed errors only the count grows: no pointer is built for those.
  const at = () => (problems.full ? '' : pointerOf(stack));
  if (key === '__proto__' || (key === 'prototype' && parent?.isObject && parent.key === 'constructor')) {
    problems.add(at(), 'reserved', `${key} is not accepted as a key here`);
  } else if (seen) {
    problems.add(at(), 'duplicate', 'the key appears more than once in this object');
  }
  top.expectKey = false;
  return true;
}

/**
 * Scans `text` (see the file comment). Throws the AppError of the first cap crossed; returns null
 * when the text cannot be JSON (a string never closed, a closing bracket or comma outside any).
 * Runs of whitespace and of scalar text are skipped by a regular expression each (one call per
 * run), so the loop itself turns about as often as the text has values.
 */
export function scanJson(text: string, maxValues: number): JsonScan | null {
  const re = patterns();
  const problems = new FieldErrorList();
  const stack: Frame[] = [];
  let values = 0;
  // A value may start here: at the start, after `[`, `:`, and `,` in an array.
  let valueNext = true;
  const countValue = () => {
    if (!valueNext) return;
    valueNext = false;
    if (++values > maxValues) throw tooManyValues(maxValues);
  };
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c <= 32) {
      if (text.charCodeAt(i + 1) <= 32) i = skip(re.blank, text, i) - 1;
    } else if (c === OPEN_OBJECT || c === OPEN_ARRAY) {
      countValue();
      if (stack.length >= MAX_BODY_DEPTH) throw tooDeep(stack);
      const isObject = c === OPEN_OBJECT;
      stack.push({ isObject, keys: null, keyCount: 0, expectKey: isObject, key: '', index: 0 });
      valueNext = !isObject;
    } else if (c === CLOSE_OBJECT || c === CLOSE_ARRAY) {
      if (stack.pop() === undefined) return null;
      valueNext = false;
    } else if (c === COMMA) {
      const top = stack[stack.length - 1];
      if (top === undefined) return null;
      if (top.isObject) top.expectKey = true;
      else top.index++;
      valueNext = !top.isObject;
    } else if (c === COLON) {
      valueNext = true;
    } else if (c === QUOTE) {
      const end = stringEnd(text, i, re);
      if (end < 0) return null;
      const top = stack[stack.length - 1];
      if (top?.isObject && top.expectKey) {
        if (!readKey(text, i, end, stack, problems)) return null;
      } else {
        countValue();
      }
      i = end;
    } else {
      countValue(); // a number, true, false or null starts (or text JSON.parse will refuse)
      if (isScalarChar(text.charCodeAt(i + 1))) i = skip(re.scalar, text, i) - 1;
    }
  }
  return { values, keyProblems: problems };
}
