/**
 * Holds every finish task (compose and sign after the commit) of a running daemon's worker pool
 * until release() is called: what a burst that outruns signing leaves, messages committed with
 * their jobs not yet due. restore() releases and puts the pool's own method back.
 */
import { vi } from 'vitest';
import type { WorkerPool } from '../../src/workers/pool.js';

export interface HeldFinishing {
  /** True once a finish task reached the pool (and is being held). */
  started: () => boolean;
  release: () => void;
  restore: () => void;
}

export function holdFinishing(pool: WorkerPool): HeldFinishing {
  let release!: () => void;
  const held = new Promise<void>((resolve) => (release = resolve));
  const finish = pool.finishMany.bind(pool);
  const spy = vi.spyOn(pool, 'finishMany').mockImplementation(async (inputs) => {
    await held;
    return finish(inputs);
  });
  return { started: () => spy.mock.calls.length > 0, release, restore: () => (release(), spy.mockRestore()) };
}
