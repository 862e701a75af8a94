/** Which worker task errors are marked as the input's (src/workers/errors.ts): the finishing stage ends a message only for those. */
import { describe, expect, it } from 'vitest';
import { TaskError, toTaskErrorData } from '../../src/workers/errors.js';

describe('toTaskErrorData', () => {
  it('marks a template, validation or named-field error as deterministic, and it survives the trip back', () => {
    const render = toTaskErrorData(new TaskError('templating_error', 'The html template could not be rendered: x', 'html'));
    expect(render).toEqual({ code: 'templating_error', message: 'The html template could not be rendered: x', field: 'html', deterministic: true });
    expect(TaskError.fromData(render).deterministic).toBe(true);
    expect(toTaskErrorData(new TaskError('validation_failed', 'no')).deterministic).toBe(true);
    expect(toTaskErrorData(new TaskError('internal_error', 'compose: date "x" is not a valid timestamp', 'date')).deterministic).toBe(true);
  });

  it('leaves unknown errors and errors about no input part unmarked', () => {
    expect(toTaskErrorData(new Error('library fault'))).toEqual({ code: 'internal_error', message: 'library fault' });
    expect(toTaskErrorData(new TaskError('internal_error', 'Worker failed: terminated')).deterministic).toBeUndefined();
    expect(toTaskErrorData(new TaskError('service_unavailable', 'shutting down')).deterministic).toBeUndefined();
    expect(TaskError.fromData({ code: 'internal_error', message: 'x' })).not.toHaveProperty('deterministic');
  });
});
