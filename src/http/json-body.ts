/**
 * The application/json body parser. Fastify's own parser refuses an empty body with 400
 * invalid_json; many clients send `Content-Type: application/json` on every request, bodiless
 * DELETEs and POSTs included, so on a route that takes no body an empty one is read as no body at
 * all (as if the header were absent). Keys that would change an object's prototype when copied are refused as before.
 */
import type { FastifyInstance } from 'fastify';
import { AppError } from '../domain/errors.js';

/** An own key that would reach a prototype when the object is merged or copied by assignment. */
function prototypeKey(v: unknown): boolean {
  const todo: unknown[] = [v];
  while (todo.length > 0) {
    const x = todo.pop();
    if (x === null || typeof x !== 'object') continue;
    if (Object.prototype.hasOwnProperty.call(x, '__proto__')) return true;
    const ctor = (x as Record<string, unknown>).constructor;
    if (Object.prototype.hasOwnProperty.call(x, 'constructor') && ctor !== null && typeof ctor === 'object' && Object.prototype.hasOwnProperty.call(ctor, 'prototype')) return true;
    todo.push(...Object.values(x));
  }
  return false;
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
  if ((text.includes('__proto__') || text.includes('constructor')) && prototypeKey(value)) throw new AppError('invalid_json', 'The body is not valid JSON');
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
