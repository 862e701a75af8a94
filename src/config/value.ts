/**
 * Reads the value of one configuration key from a config file (a JSON value) or from an
 * environment variable (always text), in three steps: take it as the key's type (text is read
 * as a number, a boolean, a duration or a comma-separated list), check it against the key's
 * schema (range, pattern, enum), then refine it (refine.ts). Each step throws a message that
 * follows the key's name, e.g. `"http.port" must be between 0 and 65535`.
 */
import { KindGuard, type TSchema } from '@sinclair/typebox';
import { Value, ValueErrorType, type ValueError } from '@sinclair/typebox/value';
import { parseDuration } from '../domain/duration.js';
import { TIMER_MAX_MS, type KeyKeywords } from './kinds.js';
import { refineValue } from './refine.js';

type KeySchema = TSchema & Partial<KeyKeywords>;

export function readValue(schema: KeySchema, raw: unknown): unknown {
  const value = asType(schema, raw);
  const error = Value.Errors(schema, value).First();
  if (error) throw new Error(describe(error));
  return refine(schema, value);
}

/** Takes `raw` as the key's type, or throws which type was expected. */
function asType(schema: KeySchema, raw: unknown): unknown {
  if (schema.duration) return asDuration(raw);
  if (KindGuard.IsInteger(schema)) return asInteger(raw);
  if (KindGuard.IsBoolean(schema)) return asBoolean(raw);
  if (KindGuard.IsArray(schema) && KindGuard.IsObject(schema.items)) return asObjectList(raw);
  if (KindGuard.IsArray(schema)) return asList(raw);
  if (KindGuard.IsRecord(schema)) return asObject(raw);
  // Texts and enums of texts.
  if (typeof raw !== 'string') throw new Error('must be a string');
  return raw;
}

function asInteger(raw: unknown): number {
  const n = typeof raw === 'string' && /^-?\d+$/.test(raw.trim()) ? Number(raw) : raw;
  if (typeof n !== 'number' || !Number.isInteger(n)) throw new Error('must be an integer');
  return n;
}

function asBoolean(raw: unknown): boolean {
  if (typeof raw === 'boolean') return raw;
  if (typeof raw === 'string' && /^(true|1|yes|on)$/i.test(raw)) return true;
  if (typeof raw === 'string' && /^(false|0|no|off)$/i.test(raw)) return false;
  throw new Error('must be a boolean (true/false)');
}

/** Milliseconds as a number, or text such as "30s" (parseDuration names what it could not read). */
function asDuration(raw: unknown): number {
  const ms = typeof raw === 'number' ? raw : typeof raw === 'string' ? parseDuration(raw) : NaN;
  if (!Number.isFinite(ms)) throw new Error('must be a duration such as "30s", "5m", "6h"');
  return ms;
}

/** An object (delivery.sites), or its JSON text as the environment gives it. */
function asObject(raw: unknown): unknown {
  let value = raw;
  if (typeof raw === 'string') {
    try {
      value = JSON.parse(raw);
    } catch {
      throw new Error('must be a JSON object');
    }
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw new Error('must be an object');
  return value;
}

/** A list of objects (delivery.sources), or its JSON text as the environment gives it. */
function asObjectList(raw: unknown): unknown[] {
  let value = raw;
  if (typeof raw === 'string') {
    try {
      value = JSON.parse(raw);
    } catch {
      throw new Error('must be a JSON array of objects');
    }
  }
  if (!Array.isArray(value) || !value.every((v) => v !== null && typeof v === 'object' && !Array.isArray(v))) throw new Error('must be an array of objects');
  return value;
}

/** A JSON array of texts, or one comma-separated text as the environment gives it. */
function asList(raw: unknown): string[] {
  if (typeof raw === 'string') {
    return raw
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean);
  }
  if (Array.isArray(raw) && raw.every((s) => typeof s === 'string')) return raw as string[];
  throw new Error('must be a list of strings (or a comma-separated string)');
}

/** The first schema failure in words; a failing list item is quoted before its message. */
function describe(error: ValueError): string {
  const schema = error.schema as KeySchema;
  // A list item is quoted; inside an object (delivery.sites) the path says where.
  const item = error.path === '' ? '' : /^\/\d+$/.test(error.path) ? `${JSON.stringify(error.value)} ` : `at ${error.path}: `;
  // An empty text is told so, rather than what the pattern expects.
  if (error.type === ValueErrorType.StringPattern && String(error.value).trim() === '') return item + 'must not be empty';
  if (schema.errorMessage) return item + schema.errorMessage;
  switch (error.type) {
    case ValueErrorType.IntegerMinimum:
    case ValueErrorType.IntegerMaximum:
      return `${item}must be between ${schema.minimum} and ${schema.maximum}`;
    case ValueErrorType.NumberMinimum:
      return `must be at least ${schema.minimum}${schema.duration ? ' ms' : ''}`;
    case ValueErrorType.NumberMaximum:
      return `must be at most ${schema.maximum}${!schema.duration ? '' : schema.maximum === TIMER_MAX_MS ? ' ms (24.8 days, the longest a timer waits)' : ' ms'}`;
    case ValueErrorType.Union:
      return `must be one of ${(schema.anyOf as TSchema[]).map((s) => s.const).join(', ')}`;
    default:
      return item + error.message.toLowerCase();
  }
}

function refine(schema: KeySchema, value: unknown): unknown {
  if (KindGuard.IsArray(schema)) return (value as unknown[]).map((item) => refine(schema.items, item));
  return schema.refine ? refineValue(schema.refine, value as string) : value;
}
