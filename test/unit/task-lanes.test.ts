import { Piscina } from 'piscina';
import { describe, expect, it } from 'vitest';
import { inLane, TwoLaneQueue } from '../../src/workers/task-lanes.js';

type Task = Parameters<TwoLaneQueue['push']>[0];

/** A queued task as piscina hands it to the queue: its queue options under the symbol. */
const task = (name: string, background: boolean) => ({ name, [Piscina.queueOptionsSymbol]: { background } }) as unknown as Task;

describe('TwoLaneQueue', () => {
  it('hands out the tasks someone waits for before background ones, each lane in order', () => {
    const q = new TwoLaneQueue();
    const [b1, w1, b2, w2] = [task('b1', true), task('w1', false), task('b2', true), task('w2', false)];
    for (const t of [b1, w1, b2, w2]) q.push(t);
    expect(q.size).toBe(4);
    expect([q.shift(), q.shift(), q.shift(), q.shift(), q.shift()]).toEqual([w1, w2, b1, b2, null]);
    expect(q.size).toBe(0);
  });

  it('puts a task given back at the head of its lane', () => {
    const q = new TwoLaneQueue();
    const [b1, b2] = [task('b1', true), task('b2', true)];
    q.push(b2);
    q.unshift(b1);
    expect([q.shift(), q.shift()]).toEqual([b1, b2]);
  });

  it('treats a task without options as waited for, and removes a task from its lane', () => {
    const q = new TwoLaneQueue();
    const plain = { name: 'plain' } as unknown as Task;
    const b = task('b', true);
    q.push(b);
    q.push(plain);
    q.remove(b);
    expect([q.shift(), q.shift()]).toEqual([plain, null]);
  });

  it('attaches the lane under a symbol, which structured clone leaves behind', () => {
    const request = inLane({ task: 'build' }, true);
    expect((request as Record<symbol, unknown>)[Piscina.queueOptionsSymbol]).toEqual({ background: true });
    const cloned = structuredClone(request);
    expect(cloned).toEqual({ task: 'build' });
    expect(Object.getOwnPropertySymbols(cloned)).toEqual([]);
  });
});
