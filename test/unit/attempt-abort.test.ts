import { setTimeout as delay } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { AttemptAbort } from '../../src/delivery/attempt-abort.js';

describe('AttemptAbort (how an attempt is called off)', () => {
  it('calls each listener once, in the order added, and only at the first abort', () => {
    const abort = new AttemptAbort();
    const calls: string[] = [];
    const a = () => calls.push('a');
    const b = () => calls.push('b');
    abort.addEventListener('abort', a, { once: true });
    abort.addEventListener('abort', b);
    abort.addEventListener('abort', a);
    expect(abort.aborted).toBe(false);
    abort.abort();
    abort.abort();
    expect(abort.aborted).toBe(true);
    expect(calls).toEqual(['a', 'b']);
  });

  it('does not call a listener removed before the abort, nor one added after it', () => {
    const abort = new AttemptAbort();
    const calls: string[] = [];
    const removed = () => calls.push('removed');
    abort.addEventListener('abort', removed);
    abort.removeEventListener('abort', removed);
    abort.abort();
    abort.addEventListener('abort', () => calls.push('late'));
    expect(calls).toEqual([]);
  });

  it('gives a real AbortSignal that aborts with it, or is aborted already', async () => {
    const before = new AttemptAbort();
    const signal = before.signal();
    expect(before.signal()).toBe(signal);
    const fired = new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
    expect(signal.aborted).toBe(false);
    before.abort();
    await fired;
    expect(signal.aborted).toBe(true);

    const after = new AttemptAbort();
    after.abort();
    expect(after.signal().aborted).toBe(true);
    // node's own APIs take it: a wait given it ends at once, as cluster mode's wait for a hold does.
    await expect(delay(60_000, undefined, { signal: AbortSignal.any([after.signal()]) })).rejects.toThrow(/abort/i);
  });
});
