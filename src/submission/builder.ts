/**
 * The worker pool as submission's MessageBuilder: task errors that come back from the threads
 * become catalogue errors with a field pointer (a template that fails to render is 422
 * templating_error on /template/html, for instance).
 */
import { AppError, ERROR_CATALOGUE, type ErrorCode } from '../domain/errors.js';
import { TaskError } from '../workers/errors.js';
import type { WorkerPool } from '../workers/pool.js';
import type { BuildRequest, BuildResult, DkimKeyRef, MessageBuilder } from './ports.js';

export class PoolMessageBuilder implements MessageBuilder {
  constructor(private readonly pool: WorkerPool) {}

  async build(input: BuildRequest): Promise<BuildResult> {
    try {
      return await this.pool.build(input);
    } catch (err) {
      throw toAppError(err, input.template ? '/template' : '');
    }
  }

  async sign(input: { raw: Uint8Array; dkim: DkimKeyRef }): Promise<Uint8Array> {
    try {
      return await this.pool.sign(input);
    } catch (err) {
      throw toAppError(err, '');
    }
  }
}

/** A task error from a worker thread as a catalogue error; `base` prefixes the field pointer. */
function toAppError(err: unknown, base: string): unknown {
  if (!(err instanceof TaskError)) return err;
  const code: ErrorCode = err.code in ERROR_CATALOGUE ? (err.code as ErrorCode) : 'internal_error';
  const pointer = err.field ? `${base}/${err.field}` : undefined;
  return new AppError(code, err.message, {
    errors: pointer && code !== 'internal_error' ? { [pointer]: [{ code, message: err.message }] } : undefined,
    cause: err,
  });
}
