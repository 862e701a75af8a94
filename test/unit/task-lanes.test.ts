import { Piscina } from 'piscina';
import { describe, expect, it } from 'vitest';
import { inLane, LaneQueue, type Lane } from '../../src/workers/task-lanes.js';

type Task = Parameters<LaneQueue['push']>[0];

/** A queued task as piscina hands it to the queue: its queue options under the symbol. */
const task = (name: string, lane: Lane) => ({ name, [Piscina.queueOptionsSymbol]: { lane } }) as unknown as Task;

const drain = (q: LaneQueue): (Task | null)[] => Array.from({ length: q.size + 1 }, () => q.shift());

describe('LaneQueue', () => {
  it('hands out the tasks someone waits for before background ones, each lane in order', () => {
    const q = new LaneQueue();
    const [b1, w1, b2, w2] = [task('b1', 'background'), task('w1', 'waited'), task('b2', 'background'), task('w2', 'waited')];
    for (const t of [b1, w1, b2, w2]) q.push(t);
    expect(q.size).toBe(4);
    expect(drain(q)).toEqual([w1, w2, b1, b2, null]);
    expect(q.size).toBe(0);
  });

  it('lets the sends and a burst of received mail take turns, after the waited-for tasks', () => {
    const q = new LaneQueue();
    const inbound = Array.from({ length: 4 }, (_, i) => task(`i${i}`, 'inbound'));
    const [b1, b2, w1] = [task('b1', 'background'), task('b2', 'background'), task('w1', 'waited')];
    for (const t of [...inbound, b1, b2, w1]) q.push(t);
    expect(drain(q)).toEqual([w1, b1, inbound[0], b2, inbound[1], inbound[2], inbound[3], null]);
  });

  it('gives a lane that was empty the next turn when a task arrives in it', () => {
    const q = new LaneQueue();
    const [i1, i2, b1] = [task('i1', 'inbound'), task('i2', 'inbound'), task('b1', 'background')];
    q.push(i1);
    expect(q.shift()).toBe(i1);
    q.push(i2);
    q.push(b1);
    expect(drain(q)).toEqual([b1, i2, null]);
  });

  it('puts a task given back at the head of its lane', () => {
    const q = new LaneQueue();
    const [b1, b2] = [task('b1', 'background'), task('b2', 'background')];
    q.push(b2);
    q.unshift(b1);
    expect(drain(q)).toEqual([b1, b2, null]);
  });

  it('treats a task without options as waited for, and removes a task from its lane', () => {
    const q = new LaneQueue();
    const plain = { name: 'plain' } as unknown as Task;
    const [b, i] = [task('b', 'background'), task('i', 'inbound')];
    q.push(b);
    q.push(i);
    q.push(plain);
    q.remove(b);
    expect(drain(q)).toEqual([plain, i, null]);
  });

  it('attaches the lane under a symbol, which structured clone leaves behind', () => {
    const request = inLane({ task: 'build' }, 'inbound');
    expect((request as Record<symbol, unknown>)[Piscina.queueOptionsSymbol]).toEqual({ lane: 'inbound' });
    const cloned = structuredClone(request);
    expect(cloned).toEqual({ task: 'build' });
    expect(Object.getOwnPropertySymbols(cloned)).toEqual([]);
  });
});
