/**
 * How a delivery attempt is called off (its deadline, the daemon's shutdown) without an
 * AbortSignal per attempt. Node's AbortSignal is an EventTarget: making one for every attempt and
 * adding and removing the listeners of its connection, RSET and transaction cost about 4.8 µs of
 * the main thread per delivered message, 2.9% of it (perf of bench delivery, issue 36). The
 * attempt's steps only ask whether it was aborted and listen for the abort, which AbortLike is;
 * a real AbortSignal (which node:timers/promises and AbortSignal.any need: cluster mode's wait
 * for a site's hold) is made only when one is asked for.
 */

/** The part of AbortSignal the attempt's steps use; an AbortSignal is one too (tests pass those). */
export interface AbortLike {
  readonly aborted: boolean;
  addEventListener(type: 'abort', listener: () => void, options?: { once?: boolean }): void;
  removeEventListener(type: 'abort', listener: () => void): void;
}

export class AttemptAbort implements AbortLike {
  private done = false;
  /** Made by the first listener: most attempts end with none left and are never aborted. */
  private listeners: Set<() => void> | undefined;
  private real: AbortController | undefined;

  get aborted(): boolean {
    return this.done;
  }

  /** As EventTarget: a listener added twice is called once; one added after the abort never. */
  addEventListener(_type: 'abort', listener: () => void, _options?: { once?: boolean }): void {
    if (!this.done) (this.listeners ??= new Set()).add(listener);
  }

  removeEventListener(_type: 'abort', listener: () => void): void {
    this.listeners?.delete(listener);
  }

  /** Calls every listener once, in the order they were added; later calls do nothing. */
  abort(): void {
    if (this.done) return;
    this.done = true;
    const listeners = this.listeners;
    this.listeners = undefined;
    this.real?.abort();
    for (const listener of listeners ?? []) listener();
  }

  /** A real AbortSignal that aborts with this one (already aborted if this one is). */
  signal(): AbortSignal {
    if (!this.real) {
      this.real = new AbortController();
      if (this.done) this.real.abort();
    }
    return this.real.signal;
  }
}
