/**
 * Task errors of the worker pool (workers/errors.ts, which stays free of the catalogue) as
 * catalogue errors on the main thread: what a failed build, render check or signature answers.
 */
import { AppError, ERROR_CATALOGUE, type ErrorCode, type FieldError } from '../domain/errors.js';
import { TaskError } from '../workers/errors.js';

/** A task error from a worker thread as a catalogue error; `base` prefixes the field pointer. */
export function toAppError(err: unknown, base: string): unknown {
  if (!(err instanceof TaskError)) return err;
  const code: ErrorCode = err.code in ERROR_CATALOGUE ? (err.code as ErrorCode) : 'internal_error';
  const pointer = err.field ? `${base}/${err.field}` : undefined;
  const item: FieldError = { code, message: err.message };
  if (err.line !== undefined) item.line = err.line;
  if (err.column !== undefined) item.column = err.column;
  return new AppError(code, err.message, {
    errors: pointer && code !== 'internal_error' ? { [pointer]: [item] } : undefined,
    cause: err,
  });
}
