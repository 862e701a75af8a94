/**
 * Retry schedules as validated data, the way Haraka writes them (outbound/config.js):
 * "5m,10m,30m,1h,2h,4h*" is the delay after the 1st, 2nd, ... failed attempt; a trailing "*"
 * repeats the last step for ever (until the message's maximum age), and "1h*3" repeats one
 * step a fixed number of times. Without a trailing "*" the schedule ends: a message that fails
 * once more is given up (bounced, reason "expired").
 *
 * RFC 5321 4.5.4.1 asks for a retry interval of at least 30 minutes in general and a give-up
 * time of at least 4-5 days; the default schedule starts faster because most deferrals today
 * are greylisting (RFC 6647 4.2: retry within minutes), and delivery.maxAgeMs sets the give-up.
 */
import { parseDuration } from './duration.js';

export interface RetrySchedule {
  /** The schedule as written. */
  readonly text: string;
  /** Delay in ms after failed attempt 1, 2, ... ("1h*3" is already expanded). */
  readonly steps: readonly number[];
  /** True when the last step repeats for ever (a trailing "*"). */
  readonly repeatLast: boolean;
}

/** "1h*3" may expand to at most this many steps (a typo like "1m*100000" is refused). */
export const MAX_REPEAT = 1000;

/** Parses and validates a schedule; throws an Error naming the bad step. */
export function parseRetrySchedule(text: string): RetrySchedule {
  if (typeof text !== 'string' || text.trim() === '') throw new Error('retry schedule is empty (example: "5m,10m,30m,1h,2h,4h*")');
  const parts = text.split(',').map((p) => p.trim());
  const steps: number[] = [];
  let repeatLast = false;
  parts.forEach((part, i) => {
    const where = `retry schedule step ${i + 1} "${part}"`;
    const step = splitStep(part);
    if (!step) throw new Error(`${where} is not "<duration>", "<duration>*" or "<duration>*<count>"`);
    let delay: number;
    try {
      delay = parseDuration(step.duration);
    } catch {
      throw new Error(`${where} is not a duration (examples: 30s, 5m, 1h, 1d)`);
    }
    if (delay <= 0) throw new Error(`${where} must be longer than 0`);
    if (step.repeats && step.count === undefined) {
      if (i !== parts.length - 1) throw new Error(`${where}: only the last step may repeat for ever ("*")`);
      repeatLast = true;
      steps.push(delay);
      return;
    }
    const count = step.count === undefined ? 1 : Number(step.count);
    if (!Number.isInteger(count) || count < 1 || count > MAX_REPEAT) throw new Error(`${where}: the repeat count must be 1 to ${MAX_REPEAT}`);
    if (steps.length + count > MAX_REPEAT) throw new Error(`${where}: the schedule may have at most ${MAX_REPEAT} steps`);
    for (let k = 0; k < count; k++) steps.push(delay);
  });
  return Object.freeze({ text, steps: Object.freeze(steps), repeatLast });
}

/**
 * One trimmed step, "<duration>", "<duration>*" or "<duration>*<count>", split at its first "*" by
 * index: what /^([^*]+?)\s*(\*\s*(\d+)?)?$/ read, without its lazy duration retrying the rest of
 * the step from each character (quadratic in a run of white space, issue 29).
 */
function splitStep(part: string): { duration: string; repeats: boolean; count?: string } | undefined {
  const star = part.indexOf('*');
  const duration = (star < 0 ? part : part.slice(0, star)).trimEnd();
  if (duration === '') return undefined;
  if (star < 0) return { duration, repeats: false };
  const m = /^\*\s*(\d+)?$/.exec(part.slice(star));
  return m ? { duration, repeats: true, count: m[1] } : undefined;
}

/**
 * The delay after failed attempt number `attempt` (1 = the first attempt failed), or undefined
 * when the schedule is exhausted and the message should be given up.
 */
export function nextDelay(schedule: RetrySchedule, attempt: number): number | undefined {
  if (!Number.isInteger(attempt) || attempt < 1) throw new Error(`attempt must be a positive integer, got ${attempt}`);
  if (attempt <= schedule.steps.length) return schedule.steps[attempt - 1];
  return schedule.repeatLast ? schedule.steps[schedule.steps.length - 1] : undefined;
}

export interface RetryPlanInput {
  schedule: RetrySchedule;
  /** The attempt that just failed, 1-based. */
  attempt: number;
  nowMs: number;
  /** When the message was accepted. */
  createdAtMs: number;
  /** delivery.maxAgeMs: after this, a deferral becomes a bounce (RFC 5321 4.5.4.1 "give up"). */
  maxAgeMs: number;
}

/**
 * When to try again after a deferral, or undefined to give up (the message is too old or the
 * schedule is exhausted). A retry that would land after the give-up time is moved to it, so
 * every message gets one last attempt at its expiry instead of expiring between two attempts.
 */
export function nextAttemptAt(p: RetryPlanInput): number | undefined {
  const expiresAt = p.createdAtMs + p.maxAgeMs;
  if (p.nowMs >= expiresAt) return undefined;
  const delay = nextDelay(p.schedule, p.attempt);
  if (delay === undefined) return undefined;
  return Math.min(p.nowMs + delay, expiresAt);
}
