/**
 * The intake's template check (submission/template-check.ts): a large part seen for the first
 * time is checked by the off-thread function, not compiled here, and its verdict is remembered;
 * small parts and the subject are compiled here; a part the worker refuses is not remembered.
 */
import { describe, expect, it } from 'vitest';
import { isAppError } from '../../src/domain/errors.js';
import { IntakeTemplates, MAIN_THREAD_MAX } from '../../src/submission/template-check.js';
import { SUBJECT_MAX_CHARS } from '../../src/workers/render.js';

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

  it('bounds the subject it renders on the main thread, loops included: templating_error on /template/subject', () => {
    const t = new IntakeTemplates(async () => undefined);
    const refusal = (subject: string, data: Record<string, unknown>): unknown => {
      try {
        return t.check({ subject, text: 't', data }, undefined);
      } catch (err) {
        return isAppError(err) && { code: err.code, errors: err.errors };
      }
    };
    const nested = '{{#each a}}{{#each ../a}}{{#each ../../a}}{{#each ../../../a}}X{{/each}}{{/each}}{{/each}}{{/each}}';
    const a = Array.from({ length: 10 }, (_, i) => i);
    // 10,000 characters out of a 100-character template; with 60 items the loop ran 10 s.
    expect(refusal(nested, { a })).toMatchObject({ code: 'templating_error', errors: { '/template/subject': [{ code: 'templating_error' }] } });
    // Loops that render nothing are bounded too.
    expect(refusal(nested.replace('X', ''), { a })).toMatchObject({ code: 'templating_error' });
    // One long value, no loop: no stall, the subject's own limit says it (max_length).
    expect(refusal('{{v}}', { v: 'y'.repeat(SUBJECT_MAX_CHARS + 1) })).toMatchObject({ code: 'validation_failed', errors: { '/template/subject': [{ code: 'max_length' }] } });
    // What fits renders as before, and a later render starts with the whole budget again.
    expect(refusal('{{#each a}}{{this}},{{/each}} {{v}}', { a, v: 'y'.repeat(200) })).toBe(`0,1,2,3,4,5,6,7,8,9, ${'y'.repeat(200)}`);
    expect(refusal('{{#each a}}{{this}}{{/each}}', { a })).toBe('0123456789');
  });
});
