/**
 * The worker pool's queue, in three lanes:
 *  - `waited`: tasks someone is waiting for (a broadcast's check that its template renders,
 *    before its 200; a domain's new DKIM key) go first. Without it such a request waited behind
 *    every task of a 10,000-entry broadcast already queued (bench/RESULTS.md, broadcast section).
 *  - `background`: the sends' bulk work after the commit (composition and signatures, the
 *    finishing stage's tasks).
 *  - `inbound`: reading received mail (issue 33: a message's JSON for its route, an attachment
 *    for its link), up to a 25 MB attachment or 10,000 parts per task, about a second of a thread.
 * Each lane is first in, first out. Waited-for tasks go before the other two; between those, the
 * lanes take turns while both hold tasks, so a burst of received mail cannot starve the sends'
 * composition and signing (nor a broadcast's backlog the received mail, whose claims hold a
 * lease: a parse must not wait for minutes). A task already running is never interrupted.
 */
import { Piscina, type TaskQueue } from 'piscina';

type Task = Parameters<TaskQueue['push']>[0];

export type Lane = 'waited' | 'background' | 'inbound';

/** The queue options a task carries (piscina passes them under Piscina.queueOptionsSymbol). */
export interface LaneOptions {
  lane: Lane;
}

export class LaneQueue implements TaskQueue {
  private readonly lanes: Record<Lane, Task[]> = { waited: [], background: [], inbound: [] };
  /** Which of the two turn-taking lanes goes next when both hold tasks. */
  private next: 'background' | 'inbound' = 'background';

  get size(): number {
    return this.lanes.waited.length + this.lanes.background.length + this.lanes.inbound.length;
  }

  push(task: Task): void {
    this.laneOf(task).push(task);
  }

  /** Piscina puts back at the head a task it took but could not hand to a thread. */
  unshift(task: Task): void {
    this.laneOf(task).unshift(task);
  }

  shift(): Task | null {
    const waited = this.lanes.waited.shift();
    if (waited) return waited;
    const first = this.next;
    const second = first === 'background' ? 'inbound' : 'background';
    const task = this.lanes[first].shift();
    if (task) {
      this.next = second;
      return task;
    }
    return this.lanes[second].shift() ?? null;
  }

  remove(task: Task): void {
    const lane = this.laneOf(task);
    const i = lane.indexOf(task);
    if (i !== -1) lane.splice(i, 1);
  }

  private laneOf(task: Task): Task[] {
    const opts = task[Piscina.queueOptionsSymbol as keyof Task] as LaneOptions | null | undefined;
    return this.lanes[opts?.lane ?? 'waited'];
  }
}

/** The request with its lane attached (a symbol key: structured clone leaves it behind). */
export function inLane<T extends object>(request: T, lane: Lane): T {
  return { ...request, [Piscina.queueOptionsSymbol]: { lane } satisfies LaneOptions };
}
