/** WorkLoop on a fake clock: coalesced kicks, no overlapping rounds, planned wake-ups, retries. */
import { describe, expect, it } from 'vitest';
import { WorkLoop } from '../../src/queue/work-loop.js';
import { FakeClock } from '../support/fake-clock.js';

const tick = () => new Promise((r) => setImmediate(r));

describe('WorkLoop', () => {
  it('runs one round for several kicks, and one more for a kick during a round', async () => {
    const clock = new FakeClock(0);
    let rounds = 0;
    let active = 0;
    let maxActive = 0;
    let release: (() => void) | undefined;
    const loop = new WorkLoop({
      clock,
      retryMs: 1000,
      onError: () => {},
      round: async () => {
        rounds++;
        maxActive = Math.max(maxActive, ++active);
        if (rounds === 1) await new Promise<void>((r) => (release = r));
        active--;
        return 1_000_000;
      },
    });
    loop.start();
    loop.kick();
    loop.kick();
    await tick();
    expect(rounds).toBe(1);
    loop.kick(); // during the first round
    await tick();
    release!();
    for (let i = 0; i < 5; i++) await tick();
    expect(rounds).toBe(2);
    expect(maxActive).toBe(1);
    await loop.stop();
  });

  it('wakes at the time the round asked for, and not after stop()', async () => {
    const clock = new FakeClock(0);
    const at: number[] = [];
    const loop = new WorkLoop({ clock, retryMs: 1000, onError: () => {}, round: async () => (at.push(clock.now()), clock.now() + 500) });
    loop.start();
    await tick();
    await tick();
    clock.advance(499);
    await tick();
    expect(at).toEqual([0]);
    clock.advance(1);
    await tick();
    await tick();
    expect(at).toEqual([0, 500]);
    await loop.stop();
    clock.advance(10_000);
    await tick();
    expect(at).toEqual([0, 500]);
  });

  it('reports a failed round and retries after retryMs', async () => {
    const clock = new FakeClock(0);
    const errors: unknown[] = [];
    let n = 0;
    const loop = new WorkLoop({
      clock,
      retryMs: 5000,
      onError: (e) => errors.push(e),
      round: async () => {
        if (++n === 1) throw new Error('store busy');
        return clock.now() + 1_000_000;
      },
    });
    loop.start();
    await tick();
    await tick();
    expect(errors).toHaveLength(1);
    clock.advance(5000);
    await tick();
    await tick();
    expect(n).toBe(2);
    await loop.stop();
  });
});
