/**
 * The application/json body parser. Fastify's own parser refuses an empty body with 400
 * invalid_json; many clients send `Content-Type: application/json` on every request, bodiless
 * DELETEs and POSTs included, so on a route that takes no body an empty one is read as no body at
 * all (as if the header were absent).
 *
 * After JSON.parse accepted the text, one pass over it checks the keys (issue 18): a key twice in
 * one object is refused (422 `duplicate` on its pointer) instead of the last one silently winning,
 * and `__proto__`, or `prototype` inside `constructor`, is refused (422 `reserved`): such keys
 * change an object's prototype when copied by assignment (prototype pollution).
 */
import type { FastifyInstance } from 'fastify';
import { AppError, FieldErrorList, pointerSegment } from '../domain/errors.js';

interface Frame {
  /** Keys seen so far (objects); null for arrays. */
  keys: Set<string> | null;
  /** Objects: a string now is a key (after `{` or `,`). */
  expectKey: boolean;
  /** The key, or array index, under which the value being read sits. */
  at: string;
  index: number;
}

/** Index of the quote that closes the string opening at `start` (the text is valid JSON). */
function stringEnd(text: string, start: number): number {
  let j = start;
  for (;;) {
    j = text.indexOf('"', j + 1);
    let slashes = 0;
    while (text.charCodeAt(j - 1 - slashes) === 92) slashes++;
    if (slashes % 2 === 0) return j;
  }
}

function pointerOf(stack: Frame[], key: string): string {
  let p = '';
  for (let k = 0; k < stack.length - 1; k++) p += '/' + pointerSegment(stack[k].at);
  return `${p}/${pointerSegment(key)}`;
}

/** Duplicate and prototype-changing keys of a text JSON.parse accepted, by JSON pointer. */
export function keyProblems(text: string): FieldErrorList {
  const errors = new FieldErrorList();
  const stack: Frame[] = [];
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 123 /* { */ || c === 91 /* [ */) {
      stack.push({ keys: c === 123 ? new Set() : null, expectKey: c === 123, at: '0', index: 0 });
    } else if (c === 125 /* } */ || c === 93 /* ] */) {
      stack.pop();
    } else if (c === 44 /* , */) {
      const top = stack[stack.length - 1];
      if (top.keys) top.expectKey = true;
      else top.at = String(++top.index);
    } else if (c === 34 /* " */) {
      const end = stringEnd(text, i);
      const top = stack[stack.length - 1];
      if (top?.keys && top.expectKey) {
        const raw = text.slice(i + 1, end);
        const key = raw.includes('\\') ? (JSON.parse(text.slice(i, end + 1)) as string) : raw;
        const parent = stack.length > 1 ? stack[stack.length - 2] : undefined;
        if (key === '__proto__' || (key === 'prototype' && parent?.keys && parent.at === 'constructor')) {
          errors.add(pointerOf(stack, key), 'reserved', `${key} is not accepted as a key here`);
        } else if (top.keys.has(key)) {
          errors.add(pointerOf(stack, key), 'duplicate', 'the key appears more than once in this object');
        }
        top.keys.add(key);
        top.at = key;
        top.expectKey = false;
      }
      i = end;
    }
  }
  return errors;
}

/** `bodyExpected`: the route declares a body; an empty one there stays 400 invalid_json. */
export function parseJsonBody(text: string, bodyExpected: boolean): unknown {
  if (text.trim() === '') {
    if (bodyExpected) throw new AppError('invalid_json', 'The body is empty; send a JSON object');
    return undefined;
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new AppError('invalid_json', 'The body is not valid JSON');
  }
  keyProblems(text).throwIfAny('The body has keys that are not accepted');
  return value;
}

/** Replaces Fastify's JSON parser; the body limit (FST_ERR_CTP_BODY_TOO_LARGE) applies as before. */
export function registerJsonParser(app: FastifyInstance): void {
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (req, body, done) => {
    try {
      done(null, parseJsonBody(body as string, req.routeOptions.schema?.body !== undefined));
    } catch (err) {
      done(err as Error, undefined);
    }
  });
}
