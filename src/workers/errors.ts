/**
 * Errors of the worker-thread tasks.
 *
 * A worker runs in another thread: anything it throws reaches the main thread through the
 * structured clone algorithm, which keeps only `message` and `stack` of an Error and drops the
 * class and custom properties such as `code`. So a task error travels as plain data,
 * `{code, message, field?}`, and the pool turns it back into a TaskError on the main thread.
 *
 * The codes are codes of the error catalogue (src/domain/errors.ts) so the caller can map them
 * to an HTTP problem or an SMTP reply without a translation table; this module does not import
 * the catalogue because workers depend on nothing but their input.
 */

/** The codes a task may fail with. */
export type TaskErrorCode = 'templating_error' | 'validation_failed' | 'internal_error' | 'service_unavailable';

/** The plain-data form of a TaskError, the only error shape that crosses the thread boundary. */
export interface TaskErrorData {
  code: TaskErrorCode;
  message: string;
  /** The input part that failed, e.g. `subject`, `html` or `text` for a template. */
  field?: string;
  /** Where in a template part the error is (from 1; template-position.ts), when known. */
  line?: number;
  column?: number;
}

export class TaskError extends Error {
  readonly code: TaskErrorCode;
  // `declare`: no own `field: undefined` property when there is no field, like the data form.
  declare readonly field?: string;
  declare line?: number;
  declare column?: number;

  constructor(code: TaskErrorCode, message: string, field?: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'TaskError';
    this.code = code;
    if (field !== undefined) this.field = field;
  }

  toData(): TaskErrorData {
    const data: TaskErrorData = { code: this.code, message: this.message };
    if (this.field !== undefined) data.field = this.field;
    if (this.line !== undefined) data.line = this.line;
    if (this.column !== undefined) data.column = this.column;
    return data;
  }

  static fromData(data: TaskErrorData): TaskError {
    const err = new TaskError(data.code, data.message, data.field);
    if (data.line !== undefined) err.line = data.line;
    if (data.column !== undefined) err.column = data.column;
    return err;
  }
}

/**
 * Whether a task error is about the task's input: a template that cannot render or inline with
 * this data (templating_error), input refused (validation_failed), or a field of the input that
 * compose refuses (internal_error naming the field). Rendering and composing are pure functions
 * of the input, so such an error comes back on every try. Decided from the code and field alone,
 * which cross the thread (the finishing stage asks on the main thread): a worker that died
 * (internal_error or service_unavailable made by the pool, no field) and an unknown error
 * (internal_error, no field, toTaskErrorData) are not.
 */
export function isInputError(code: TaskErrorCode, field: string | undefined): boolean {
  return code === 'templating_error' || code === 'validation_failed' || (code === 'internal_error' && field !== undefined);
}

/**
 * Turns anything thrown inside a task into plain error data. Unknown errors become
 * `internal_error` with their message, so a library fault is reported, not hidden, but no
 * stack or object graph is sent along; without a field they are not input errors (isInputError:
 * the finishing stage keeps retrying them, a fault may be the thread's, not the input's).
 */
export function toTaskErrorData(err: unknown): TaskErrorData {
  if (err instanceof TaskError) return err.toData();
  const message = err instanceof Error ? err.message : String(err);
  return { code: 'internal_error', message: message || 'Unknown worker error' };
}
