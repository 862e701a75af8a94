/**
 * The application/json body parser. Fastify's own parser refuses an empty body with 400
 * invalid_json; many clients send `Content-Type: application/json` on every request, bodiless
 * DELETEs and POSTs included, so on a route that takes no body an empty one is read as no body at
 * all (as if the header were absent).
 *
 * Before JSON.parse, json-scan.ts reads the text once and refuses a body beyond the caps on
 * nesting, keys per object and values (issue 29), so that no body costs more than its caps allow
 * however large it is; its duplicate and prototype-changing keys are refused once JSON.parse has
 * accepted the text (issue 18).
 */
import type { FastifyInstance } from 'fastify';
import { AppError } from '../domain/errors.js';
import { describeJsonError } from './json-error.js';
import { scanJson } from './json-scan.js';

export interface ParsedBody {
  value: unknown;
  /** JSON values in the body (json-scan.ts); 0 for no body. */
  values: number;
}

/**
 * `bodyExpected`: the route declares a body; an empty one there stays 400 invalid_json. A UTF-8
 * byte order mark before the text is dropped (RFC 8259 8.1 lets a parser ignore it): files saved
 * by Windows editors and PowerShell start with one, and JSON.parse refuses it.
 */
export function parseJsonBody(body: string, bodyExpected: boolean, maxValues: number): ParsedBody {
  const text = body.charCodeAt(0) === 0xfeff ? body.slice(1) : body;
  if (text.trim() === '') {
    if (bodyExpected) throw new AppError('invalid_json', 'The body is empty; send a JSON object');
    return { value: undefined, values: 0 };
  }
  const scan = scanJson(text, maxValues);
  // Where the text goes wrong is worked out only on this error path (json-error.ts, linear too).
  if (scan === null) throw new AppError('invalid_json', describeJsonError(text));
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new AppError('invalid_json', describeJsonError(text));
  }
  scan.keyProblems.throwIfAny('The body has keys that are not accepted');
  return { value, values: scan.values };
}

export interface JsonParserOptions {
  /** Cap on the JSON values of one body (json-scan.ts maxBodyValues). */
  maxValues: number;
  /** Where each parsed object body's value count is left for the validators (validators.ts). */
  valueCounts: WeakMap<object, number>;
}

/** Replaces Fastify's JSON parser; the body limit (FST_ERR_CTP_BODY_TOO_LARGE) applies as before. */
export function registerJsonParser(app: FastifyInstance, o: JsonParserOptions): void {
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (req, body, done) => {
    try {
      const parsed = parseJsonBody(body as string, req.routeOptions.schema?.body !== undefined, o.maxValues);
      if (parsed.value !== null && typeof parsed.value === 'object') o.valueCounts.set(parsed.value, parsed.values);
      done(null, parsed.value);
    } catch (err) {
      done(err as Error, undefined);
    }
  });
}
