/**
 * The documented X-Tags and X-Metadata header fields of SMTP submissions, lifted into the tags
 * and metadata the API takes as JSON, with the API's limits (docs/smtp-submission.md).
 */
import { AppError } from '../domain/errors.js';

/** X-Tags: comma-separated, same rules as the API's tags (at most 5, [A-Za-z0-9_-]{1,100}). */
export function parseTags(value: string | undefined): string[] {
  if (!value) return [];
  const tags = value.split(',').map((t) => t.trim()).filter(Boolean);
  const bad = tags.find((t) => !/^[A-Za-z0-9_-]{1,100}$/.test(t));
  if (bad !== undefined) throw new AppError('validation_failed', `X-Tags: "${bad.slice(0, 40)}" is not a valid tag (letters, digits, - and _, at most 100)`);
  if (tags.length > 5) throw new AppError('validation_failed', 'X-Tags: at most 5 tags');
  return [...new Set(tags)];
}

/** X-Metadata: a JSON object of at most 10 fields (keys up to 50, values up to 100 characters). */
export function parseMetadata(value: string | undefined): Record<string, string> {
  if (!value) return {};
  let obj: unknown;
  try {
    obj = JSON.parse(value);
  } catch {
    throw new AppError('validation_failed', 'X-Metadata must be a JSON object');
  }
  if (!obj || typeof obj !== 'object' || Array.isArray(obj)) throw new AppError('validation_failed', 'X-Metadata must be a JSON object');
  const entries = Object.entries(obj as Record<string, unknown>);
  if (entries.length > 10) throw new AppError('validation_failed', 'X-Metadata: at most 10 fields');
  const out: Record<string, string> = {};
  for (const [k, v] of entries) {
    if (typeof v !== 'string' && typeof v !== 'number' && typeof v !== 'boolean') throw new AppError('validation_failed', `X-Metadata: "${k}" must be a string, number or boolean`);
    if (k.length > 50 || String(v).length > 100) throw new AppError('validation_failed', `X-Metadata: "${k}" is too long (keys 50, values 100 characters)`);
    // Same rule as the API's metadata: no control characters (CR/LF above all) in keys or values.
    if (/[\u0000-\u001f\u007f]/.test(k + String(v))) throw new AppError('validation_failed', 'X-Metadata: keys and values must not contain control characters');
    out[k] = String(v);
  }
  return out;
}
