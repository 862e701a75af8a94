import { describe, expect, it } from 'vitest';
import { QuietStacks } from '../../src/workers/quiet-stacks.js';

describe('QuietStacks', () => {
  it('captures no stack while work runs, and restores the limit when the last overlapping work ends, also on a throw', async () => {
    const before = Error.stackTraceLimit;
    const quiet = new QuietStacks();
    let release!: () => void;
    const first = quiet.run(() => new Promise<void>((r) => (release = r)));
    expect(Error.stackTraceLimit).toBe(0);
    expect(new Error('x').stack).toBe('Error: x');
    const second = quiet.run(async () => {
      throw new Error('kept message');
    });
    await expect(second).rejects.toThrow('kept message');
    // The first still runs: the limit stays 0.
    expect(Error.stackTraceLimit).toBe(0);
    release();
    await first;
    expect(Error.stackTraceLimit).toBe(before);
    expect(new Error('y').stack).toContain('quiet-stacks.test.ts');
  });
});
