/**
 * The one way tests wait for the system: poll a condition until it holds. Built on vitest's
 * vi.waitFor (real timers, so the delivery tests' FakeClock does not stall it) with one argument
 * order for every caller, and a timeout message that names what was awaited and what the
 * condition last saw, since "timed out" alone does not say whether the system was slow or wrong.
 * Under vi.useFakeTimers, vi.waitFor also advances the fake clock by the interval at each check.
 */
import { inspect } from 'node:util';
import { vi } from 'vitest';

export type Falsy = false | 0 | '' | null | undefined;

export interface WaitOptions {
  /** What the test waits for, in words: the timeout error quotes it. */
  what: string;
  /** Milliseconds before giving up. */
  timeout?: number;
  /**
   * Checked before each try: a reason (words) to stop at once, for a wait that can no longer
   * succeed (the process that should answer has exited). The error quotes the reason.
   */
  failFast?: () => string | Falsy;
}

const INTERVAL_MS = 20;

/**
 * Resolves with fn's first truthy value. A throw counts as "not yet" (a server not yet
 * listening, a record not yet written); on timeout the error carries the last value or throw.
 */
export async function waitFor<T>(fn: () => T, { what, timeout = 10_000, failFast }: WaitOptions): Promise<Exclude<Awaited<T>, Falsy>> {
  let stopped: string | Falsy;
  const value = await vi.waitFor(
    async () => {
      stopped = failFast?.();
      if (stopped) return undefined;
      let value: Awaited<T>;
      try {
        value = await fn();
      } catch (err) {
        throw new Error(`timed out after ${timeout} ms waiting for ${what} (last thrown: ${summary(err)})`);
      }
      if (!value) throw new Error(`timed out after ${timeout} ms waiting for ${what} (last value: ${summary(value)})`);
      return value as Exclude<Awaited<T>, Falsy>;
    },
    { timeout, interval: INTERVAL_MS },
  );
  if (stopped) throw new Error(`${stopped} while waiting for ${what}`);
  return value!;
}

function summary(v: unknown): string {
  const text = v instanceof Error ? v.message : inspect(v, { depth: 2, breakLength: Infinity });
  return text.length > 300 ? `${text.slice(0, 300)}…` : text;
}
