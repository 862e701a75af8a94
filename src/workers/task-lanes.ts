/**
 * The worker pool's queue, in two lanes: tasks someone is waiting for (a broadcast's check that
 * its template renders, before its 200; a domain's new DKIM key) go before bulk work queued in
 * the background (composition and signatures after the commit, the finishing stage's tasks).
 * Without it such a request waited behind every task of a 10,000-entry broadcast already queued
 * (bench/RESULTS.md, broadcast section). Each lane is
 * first in, first out; background tasks run whenever no waited-for task is queued, and a task
 * already running is never interrupted.
 */
import { Piscina, type TaskQueue } from 'piscina';

type Task = Parameters<TaskQueue['push']>[0];

/** The queue options a task carries (piscina passes them under Piscina.queueOptionsSymbol). */
export interface LaneOptions {
  background: boolean;
}

export class TwoLaneQueue implements TaskQueue {
  private readonly waitedFor: Task[] = [];
  private readonly background: Task[] = [];

  get size(): number {
    return this.waitedFor.length + this.background.length;
  }

  push(task: Task): void {
    this.laneOf(task).push(task);
  }

  /** Piscina puts back at the head a task it took but could not hand to a thread. */
  unshift(task: Task): void {
    this.laneOf(task).unshift(task);
  }

  shift(): Task | null {
    return this.waitedFor.shift() ?? this.background.shift() ?? null;
  }

  remove(task: Task): void {
    const lane = this.laneOf(task);
    const i = lane.indexOf(task);
    if (i !== -1) lane.splice(i, 1);
  }

  private laneOf(task: Task): Task[] {
    const opts = task[Piscina.queueOptionsSymbol as keyof Task] as LaneOptions | null | undefined;
    return opts?.background ? this.background : this.waitedFor;
  }
}

/** The request with its lane attached (a symbol key: structured clone leaves it behind). */
export function inLane<T extends object>(request: T, background: boolean): T {
  return { ...request, [Piscina.queueOptionsSymbol]: { background } satisfies LaneOptions };
}
