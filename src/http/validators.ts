/**
 * The schema validators of the HTTP API. Bodies are validated strictly: no coercion, no silently
 * dropped properties, except that null for an optional field is taken as its absence and dropped
 * before validation (null-fields.ts). Query strings are text by nature, so there (only) numbers
 * and booleans are coerced.
 *
 * Every error of a request is reported at once (Ajv's allErrors), but allErrors costs: an invalid
 * body of a million unknown keys made Ajv build a million error objects, a 62 MB 422 and seconds
 * of a blocked loop (issue 29). So each body schema is compiled twice: a validator that stops at
 * the first error runs first (the common valid body also passes faster that way), and only a body
 * it refused that has at most FULL_REPORT_MAX_VALUES JSON values (json-scan.ts counted them) is
 * validated again with allErrors for the full report; a larger one is answered with the first
 * error found.
 */
import type { FastifyInstance } from 'fastify';
import { Ajv, type ErrorObject, type Options as AjvOptions } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { nullStripper } from './null-fields.js';

/** Largest invalid body (in JSON values) whose every schema error is reported. */
export const FULL_REPORT_MAX_VALUES = 10_000;

const addFormats = ((addFormatsModule as unknown as { default?: unknown }).default ?? addFormatsModule) as (ajv: Ajv) => Ajv;

function makeAjv(o: { coerce: boolean; allErrors: boolean }): Ajv {
  // verbose: an error carries its parentSchema, whose properties the "did you mean" hint of an
  // unknown field is chosen among (field-hints.ts); it costs only when validation fails.
  const opts: AjvOptions = { removeAdditional: false, coerceTypes: o.coerce, allErrors: o.allErrors, useDefaults: false, strict: false, verbose: true };
  return addFormats(new Ajv(opts));
}

/**
 * A headers schema that only documents optional string headers (request-headers.ts checks the
 * values itself) cannot fail: Node hands every such header over as one string (RFC 9110 5.3,
 * repeated fields joined with commas), so validating it on each request would only cost time.
 */
function headersNeverFail(schema: unknown): boolean {
  const s = schema as { type?: unknown; required?: unknown; properties?: Record<string, Record<string, unknown>> };
  if (s.type !== 'object' || s.required !== undefined || !s.properties) return false;
  if (Object.keys(s).some((k) => k !== 'type' && k !== 'properties')) return false;
  return Object.values(s.properties).every((p) => p.type === 'string' && Object.keys(p).every((k) => k === 'type' || k === 'description'));
}

/** A validator as Fastify calls it: true, or false with the errors on the function. */
interface Validator {
  (data: unknown): boolean;
  errors?: ErrorObject[] | null;
}

/** A body validator; `values` is the body's JSON value count (json-scan.ts). */
export interface BodyValidator {
  (data: unknown, values: number): boolean;
  errors?: ErrorObject[] | null;
}

/** Compiles body schemas into the two passes of the file comment. */
export class BodyValidators {
  private readonly firstError = makeAjv({ coerce: false, allErrors: false });
  readonly allErrors = makeAjv({ coerce: false, allErrors: true });

  compile(schema: object): BodyValidator {
    const first = this.firstError.compile(schema);
    const full = this.allErrors.compile(schema);
    const dropNulls = nullStripper(schema);
    const validate: BodyValidator = (data, values) => {
      // A body that passes holds no null to drop (a dropped null is one its field's schema
      // refuses), so the nulls are looked for only in a body that fails: no walk on the hot path.
      if (first(data) || (dropNulls && (dropNulls(data), first(data)))) {
        validate.errors = null;
        return true;
      }
      if (values <= FULL_REPORT_MAX_VALUES) {
        full(data);
        validate.errors = full.errors;
      } else {
        validate.errors = first.errors;
      }
      return false;
    };
    return validate;
  }
}

/** JSON values in `value`, counted up to `limit` at most (a walk that stops there, iterative). */
export function valuesUpTo(value: unknown, limit: number): number {
  let count = 0;
  const todo: unknown[] = [value];
  while (todo.length > 0 && count < limit) {
    const v = todo.pop();
    count++;
    if (v !== null && typeof v === 'object') for (const x of Array.isArray(v) ? v : Object.values(v)) todo.push(x);
  }
  return count;
}

/**
 * Fastify's form of a body validator. The value count of a body comes from the JSON parser's
 * `valueCounts`; a part of one validated on its own (a batch entry, through
 * req.compileValidationSchema) is counted here, only when it failed and only up to the threshold.
 */
function withValueCount(validate: BodyValidator, valueCounts: WeakMap<object, number>): Validator {
  const v: Validator = (data) => {
    let values = data !== null && typeof data === 'object' ? valueCounts.get(data) : 1;
    if (values === undefined) {
      if (validate(data, Infinity)) {
        v.errors = null;
        return true;
      }
      values = valuesUpTo(data, FULL_REPORT_MAX_VALUES + 1);
    }
    const ok = validate(data, values);
    v.errors = validate.errors;
    return ok;
  };
  return v;
}

/** Sets the validator compiler; `valueCounts` is where the JSON parser leaves each body's value count. */
export function registerValidators(app: FastifyInstance, valueCounts: WeakMap<object, number>): void {
  const bodies = new BodyValidators();
  const query = makeAjv({ coerce: true, allErrors: true });
  app.setValidatorCompiler(({ schema, httpPart }) => {
    if (httpPart === 'headers' && headersNeverFail(schema)) return () => true;
    if (httpPart === 'querystring' || httpPart === 'params') return query.compile(schema);
    // Headers are bounded by Node's header limit (client-compat.ts): every error, without coercion.
    if (httpPart === 'headers') return bodies.allErrors.compile(schema);
    return withValueCount(bodies.compile(schema), valueCounts);
  });
}
