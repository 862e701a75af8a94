/** Which worker task errors are the input's (src/workers/errors.ts isInputError): the finishing stage ends a message only for those. */
import { describe, expect, it } from 'vitest';
import { isInputError, TaskError, toTaskErrorData } from '../../src/workers/errors.js';

/** As the main thread sees it: the error data back from the thread, its code and field asked. */
const afterTheTrip = (err: unknown) => {
  const back = TaskError.fromData(structuredClone(toTaskErrorData(err)));
  return isInputError(back.code, back.field);
};

describe('isInputError', () => {
  it('holds for a template, validation or named-field error, from what crosses the thread', () => {
    const render = toTaskErrorData(new TaskError('templating_error', 'The html template could not be rendered: x', 'html'));
    expect(render).toEqual({ code: 'templating_error', message: 'The html template could not be rendered: x', field: 'html' });
    expect(afterTheTrip(new TaskError('templating_error', 'The html template could not be rendered: x', 'html'))).toBe(true);
    expect(afterTheTrip(new TaskError('validation_failed', 'no'))).toBe(true);
    expect(afterTheTrip(new TaskError('internal_error', 'compose: date "x" is not a valid timestamp', 'date'))).toBe(true);
  });

  it('does not hold for unknown errors, a worker that died, or errors about no input part', () => {
    expect(toTaskErrorData(new Error('library fault'))).toEqual({ code: 'internal_error', message: 'library fault' });
    expect(afterTheTrip(new Error('library fault'))).toBe(false);
    // What the pool makes on the main thread for a thread that died or a pool that stops (pool.ts).
    expect(isInputError('internal_error', new TaskError('internal_error', 'Worker failed: terminated').field)).toBe(false);
    expect(isInputError('service_unavailable', undefined)).toBe(false);
    expect(TaskError.fromData({ code: 'internal_error', message: 'x' })).not.toHaveProperty('field');
  });
});
