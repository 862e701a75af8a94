/**
 * A request body that may be absent and holds at most one optional enum field (POST
 * /domains/{id}/rotate-key `{dkimAlgorithm?}`, POST /webhooks/{id}/test `{eventType?}`). The
 * services check it after their access rules rather than leave it to a route schema, which
 * would also refuse a request without a body, and answer before the access check (404, 403).
 * The 422 reads as the schema's would (http/problem.ts).
 */
import { FieldErrorList, pointerSegment } from './errors.js';

/**
 * The field's value, undefined without a body or without the field (null as the field's value
 * is its absence, as for the schema-checked bodies: http/null-fields.ts); 422 validation_failed
 * otherwise.
 */
export function optionalEnumField<T extends string>(body: unknown, field: string, allowed: readonly T[]): T | undefined {
  if (body === undefined || body === null) return undefined;
  const errors = new FieldErrorList();
  if (typeof body !== 'object' || Array.isArray(body)) {
    errors.add('/', 'invalid_type', 'must be an object');
  } else {
    for (const k of Object.keys(body)) if (k !== field) errors.add(`/${pointerSegment(k)}`, 'unknown_field', 'is not a known field');
    const value = (body as Record<string, unknown>)[field];
    if (value !== undefined && value !== null && !(allowed as readonly unknown[]).includes(value)) errors.add(`/${field}`, 'invalid_value', `must be one of: ${allowed.join(', ')}`);
  }
  errors.throwIfAny('The request body has invalid fields');
  return (body as Record<string, T | null | undefined>)[field] ?? undefined;
}
