/**
 * Turns errors into RFC 9457 problem details (application/problem+json) with the fields of the
 * API specification's section 7. This file and the Fastify error handler in server.ts are the
 * only places HTTP error bodies are made.
 */
import { ERROR_CATALOGUE, AppError, MAX_FIELD_ERRORS, pointerSegment, type ErrorCode, type FieldErrors } from '../domain/errors.js';

export interface Problem {
  type: string;
  title: string;
  instance: string;
  status: number;
  code: ErrorCode;
  detail: string;
  requestId: string;
  errors?: FieldErrors;
  /** Field errors found beyond the MAX_FIELD_ERRORS listed in `errors`; absent when all are listed. */
  errorsOmitted?: number;
}

export function toProblem(err: AppError, ctx: { publicUrl: string; instance: string; requestId: string }): Problem {
  const problem: Problem = {
    type: `${ctx.publicUrl}/errors/${err.code}`,
    title: ERROR_CATALOGUE[err.code].title,
    instance: ctx.instance,
    status: err.status,
    code: err.code,
    detail: err.message,
    requestId: ctx.requestId,
  };
  if (err.errors && Object.keys(err.errors).length > 0) {
    const { listed, omitted } = firstFieldErrors(err.errors);
    problem.errors = listed;
    const total = omitted + (err.errorsOmitted ?? 0);
    if (total > 0) problem.errorsOmitted = total;
  }
  return problem;
}

/** At most MAX_FIELD_ERRORS of `errors`, in their order, and how many were left out. */
function firstFieldErrors(errors: FieldErrors): { listed: FieldErrors; omitted: number } {
  const listed: FieldErrors = {};
  let room = MAX_FIELD_ERRORS;
  let omitted = 0;
  for (const [pointer, list] of Object.entries(errors)) {
    if (room > 0) listed[pointer] = list.slice(0, room);
    const taken = Math.min(room, list.length);
    room -= taken;
    omitted += list.length - taken;
  }
  return { listed, omitted };
}

/** The subset of an Ajv error object we read. */
export interface AjvErrorLike {
  keyword: string;
  instancePath: string;
  params: Record<string, unknown>;
  message?: string;
}

/** Per-field error codes, stable API: "max_length" is the one the specification shows. */
export const FIELD_CODES_FROM_AJV: Readonly<Record<string, string>> = {
  maxLength: 'max_length',
  minLength: 'min_length',
  maxItems: 'max_items',
  minItems: 'min_items',
  maxProperties: 'max_properties',
  minProperties: 'min_properties',
  maximum: 'max_value',
  minimum: 'min_value',
  required: 'required',
  type: 'invalid_type',
  enum: 'invalid_value',
  const: 'invalid_value',
  format: 'invalid_format',
  pattern: 'invalid_format',
  additionalProperties: 'unknown_field',
  uniqueItems: 'duplicate_items',
};

/** Maps Ajv errors (all of them: allErrors is on) to field errors keyed by JSON pointer. */
export function fieldErrorsFromAjv(errors: AjvErrorLike[]): FieldErrors {
  const out: FieldErrors = {};
  for (const e of errors) {
    let pointer = e.instancePath;
    let message = e.message ?? 'is invalid';
    if (e.keyword === 'required') {
      pointer += '/' + pointerSegment(String(e.params.missingProperty));
      message = 'is required';
    } else if (e.keyword === 'additionalProperties') {
      pointer += '/' + pointerSegment(String(e.params.additionalProperty));
      message = 'is not a known field';
    } else if (e.keyword === 'maxLength' || e.keyword === 'minLength') {
      const limit = e.params.limit;
      message = e.keyword === 'maxLength' ? `must be at most ${limit} characters` : `must be at least ${limit} characters`;
    } else if (e.keyword === 'enum') {
      message = `must be one of: ${(e.params.allowedValues as unknown[]).join(', ')}`;
    }
    if (e.keyword === 'if' || e.keyword === 'anyOf' || e.keyword === 'oneOf') continue; // summaries of other errors
    const key = pointer || '/';
    const list = (out[key] ??= []);
    const code = FIELD_CODES_FROM_AJV[e.keyword] ?? 'invalid';
    if (!list.some((x) => x.code === code && x.message === message)) list.push({ code, message });
  }
  return out;
}
