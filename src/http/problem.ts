/**
 * Turns errors into RFC 9457 problem details (application/problem+json) with the fields of the
 * API specification's section 7. This file and the Fastify error handler in server.ts are the
 * only places HTTP error bodies are made.
 */
import { HEADER_NAME_PATTERN, HEADER_VALUE_PATTERN } from '../domain/webhook.js';
import { MEDIA_TYPE_PATTERN } from '../domain/media-type.js';
import { ERROR_CATALOGUE, AppError, MAX_FIELD_ERRORS, pointerSegment, type ErrorCode, type FieldErrors } from '../domain/errors.js';
import { didYouMean } from './field-hints.js';
import { NO_CONTROL_CHARS } from './schemas.js';

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

/** The subset of an Ajv error object we read (`parentSchema`: Ajv's verbose option, validators.ts). */
export interface AjvErrorLike {
  keyword: string;
  instancePath: string;
  params: Record<string, unknown>;
  message?: string;
  /** Set on errors of propertyNames' own rules: the key that broke them. */
  propertyName?: string;
  parentSchema?: { properties?: Record<string, unknown> };
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

/**
 * Ajv keywords whose error only sums up errors reported beside it (the branch errors of anyOf and
 * oneOf, each bad key of propertyNames): listing them would repeat Ajv's own wording.
 */
const SUMMARY_KEYWORDS = new Set(['if', 'anyOf', 'oneOf', 'propertyNames']);

/**
 * What the patterns of our schemas ask for, in words (issue 30: no `must match pattern "^[^\u0000-…"`
 * reaches a client). A pattern missing here is said as "is not in the expected format";
 * test/unit/ajv-messages.test.ts checks every pattern of the route schemas is listed.
 */
export const PATTERN_MESSAGES: Readonly<Record<string, string>> = {
  [NO_CONTROL_CHARS]: 'must not contain control characters (line breaks included)',
  '^[A-Za-z0-9_-]*$': 'may contain only letters, digits, hyphens and underscores',
  '^[^\\s<>"\\u0000-\\u001f]*$': 'must not contain white space, <, > or "',
  [MEDIA_TYPE_PATTERN]: 'must be a media type such as application/pdf, parameters as in text/plain; charset=utf-8',
  '^(?:(?=.*\\S)[^\\u0000-\\u001f\\u007f]*)?$': 'must contain something besides white space, and no control characters',
  [HEADER_NAME_PATTERN]: 'must be a header field name (letters, digits and !#$%&\'*+.^_`|~-, RFC 9110 5.1)',
  [HEADER_VALUE_PATTERN]: 'must not contain control characters other than tab (line breaks included) nor characters beyond U+00FF (Latin-1)',
};

/** What our formats ask for, in words. */
const FORMAT_MESSAGES: Readonly<Record<string, string>> = {
  uuid: 'must be a UUID',
  'date-time': 'must be a date and time as in RFC 3339, such as 2025-01-31T09:00:00Z',
  email: 'is not a valid email address',
  uri: 'must be a URL',
};

const TYPE_NAMES: Readonly<Record<string, string>> = {
  string: 'a string',
  number: 'a number',
  integer: 'an integer',
  boolean: 'true or false',
  object: 'an object',
  array: 'an array',
  null: 'null',
};

/** "a, b or c". */
function either(words: string[]): string {
  return words.length <= 1 ? words.join('') : `${words.slice(0, -1).join(', ')} or ${words[words.length - 1]}`;
}

const plural = (n: unknown, one: string, many: string): string => `${n} ${n === 1 ? one : many}`;

/** Our message for one Ajv error (never Ajv's own `must NOT have more than 50 items`). */
function messageOf(e: AjvErrorLike): string {
  const p = e.params;
  switch (e.keyword) {
    case 'required':
      return 'is required';
    case 'additionalProperties': {
      const hint = didYouMean(String(p.additionalProperty), Object.keys(e.parentSchema?.properties ?? {}));
      return hint ? `is not a known field; ${hint}` : 'is not a known field';
    }
    case 'maxLength':
      return `must be at most ${plural(p.limit, 'character', 'characters')}`;
    case 'minLength':
      return p.limit === 1 ? 'must not be empty' : `must be at least ${plural(p.limit, 'character', 'characters')}`;
    case 'maxItems':
      return `must have at most ${plural(p.limit, 'item', 'items')}`;
    case 'minItems':
      return `must have at least ${plural(p.limit, 'item', 'items')}`;
    case 'maxProperties':
      return `must have at most ${plural(p.limit, 'field', 'fields')}`;
    case 'minProperties':
      return `must have at least ${plural(p.limit, 'field', 'fields')}`;
    case 'maximum':
      return `must be at most ${p.limit}`;
    case 'minimum':
      return `must be at least ${p.limit}`;
    case 'type':
      return `must be ${either([p.type].flat().map((t) => TYPE_NAMES[String(t)] ?? String(t)))}`;
    case 'enum':
      return `must be one of: ${(p.allowedValues as unknown[]).join(', ')}`;
    case 'const':
      return `must be ${JSON.stringify(p.allowedValue)}`;
    case 'format':
      return FORMAT_MESSAGES[String(p.format)] ?? 'is not in the expected format';
    case 'pattern':
      return PATTERN_MESSAGES[String(p.pattern)] ?? 'is not in the expected format';
    case 'uniqueItems':
      return `must not have the same item twice (items ${p.j} and ${p.i} are equal)`;
    default:
      return 'is invalid';
  }
}

/** Maps Ajv errors (all of them: allErrors is on) to field errors keyed by JSON pointer. */
export function fieldErrorsFromAjv(errors: AjvErrorLike[]): FieldErrors {
  const out: FieldErrors = {};
  for (const e of errors) {
    if (SUMMARY_KEYWORDS.has(e.keyword)) continue;
    let pointer = e.instancePath;
    let message = messageOf(e);
    if (e.keyword === 'required') pointer += '/' + pointerSegment(String(e.params.missingProperty));
    else if (e.keyword === 'additionalProperties') pointer += '/' + pointerSegment(String(e.params.additionalProperty));
    // A rule of propertyNames broken by a key: said of the key, on the object that has it.
    if (e.propertyName !== undefined) message = `key ${JSON.stringify(e.propertyName.slice(0, 60))}: ${message}`;
    const key = pointer || '/';
    const list = (out[key] ??= []);
    const code = FIELD_CODES_FROM_AJV[e.keyword] ?? 'invalid';
    if (!list.some((x) => x.code === code && x.message === message)) list.push({ code, message });
  }
  return out;
}
