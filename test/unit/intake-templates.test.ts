/**
 * The intake's template check (submission/template-check.ts): a large part seen for the first
 * time is checked by the off-thread function, not compiled here, and its verdict is remembered;
 * small parts and the subject are compiled here; a part the worker refuses is not remembered.
 */
import { describe, expect, it } from 'vitest';
import { isAppError } from '../../src/domain/errors.js';
import { IntakeTemplates, MAIN_THREAD_MAX } from '../../src/submission/template-check.js';

const LARGE = `${'<p>x</p>'.repeat(MAIN_THREAD_MAX / 8 + 1)}{{name}}`;

describe('IntakeTemplates', () => {
  it('sends a large unseen part off the main thread once, then checks it from the remembered verdict', async () => {
    const calls: Array<{ html?: string; text?: string }> = [];
    const t = new IntakeTemplates(async (parts) => void calls.push(parts));
    const template = { subject: 'Hi {{name}}', html: LARGE, text: 'Hello {{name}}', data: { name: 'Ann' } };
    await t.prepare(template);
    expect(calls).toEqual([{ html: LARGE }]);
    expect(t.check(template, undefined)).toBe('Hi Ann');
    // Only the small text part was compiled here; the subject by the subject renderer.
    expect([t.misses, t.subjectMisses]).toEqual([1, 1]);
    await t.prepare(template);
    expect(calls).toHaveLength(1);
  });

  it('remembers nothing of a part the worker refused, and passes its templating_error on', async () => {
    let refuse = true;
    const t = new IntakeTemplates(async () => {
      if (refuse) throw new Error('templating_error from the worker');
    });
    await expect(t.prepare({ html: LARGE })).rejects.toThrow('templating_error from the worker');
    refuse = false;
    await t.prepare({ html: LARGE });
    expect(t.misses).toBe(0);
  });

  it('compiles small parts here, with the 422 of a broken one', async () => {
    const t = new IntakeTemplates(async () => {
      throw new Error('not for small parts');
    });
    await t.prepare({ html: '{{#if}}broken' });
    try {
      t.check({ subject: 's', html: '{{#if}}broken', data: {} }, undefined);
      expect.unreachable();
    } catch (err) {
      expect(isAppError(err) && err.code).toBe('templating_error');
    }
  });
});
