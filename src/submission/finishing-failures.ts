/**
 * The finishing stage's failures (finishing.ts): why a message could not be composed or signed,
 * when it is tried again, and when it ends instead. Kept apart from the stage's scheduling so the
 * policy reads in one place.
 */
import { isAppError } from '../domain/errors.js';
import type { FinishingTries, UnfinishedFailure } from '../store/port/messages.js';
import { isInputError, TaskError } from '../workers/errors.js';

/**
 * Why a try failed, for what happens next. full: the store is full, retried soon (space usually
 * returns). unavailable: the cluster's PostgreSQL cannot be reached (store_unavailable) or left a
 * call made within a request's deadline unanswered (store_timeout), retried
 * on the same curve as full: it says nothing of the message, and the store would refuse the count
 * of its tries too. input: the worker's error is about the input, so it comes back the same way on every
 * try (a template that cannot render with this data: templating errors now happen after the 200,
 * since rendering moved after the commit) or the composed message is over the size limit; it is
 * tried again a few times a few seconds apart (a worker that crashed meanwhile gives another
 * error, which starts the count again), then ended. other: retried with a growing wait, never
 * ended: nothing says the message is at fault.
 */
export type FailureKind = 'full' | 'unavailable' | 'input' | 'other';

/** A composed message over smtp.maxMessageSize: its size comes from the data, known only once composed. */
export class ComposedTooLarge extends Error {}

/** The TaskError behind a failure: as the pool gave it, or as the cause of the catalogue error builder.ts made of it. */
function taskErrorOf(err: unknown): TaskError | undefined {
  if (err instanceof TaskError) return err;
  return err instanceof Error && err.cause instanceof TaskError ? err.cause : undefined;
}

/** The catalogue code (domain/errors.ts) a broadcast failure row names for a composition that failed for good. */
export function failureCode(err: unknown): string {
  if (err instanceof ComposedTooLarge) return 'validation_failed';
  return taskErrorOf(err)?.code ?? (isAppError(err) ? err.code : 'internal_error');
}

export function classify(err: unknown): FailureKind {
  if (isAppError(err) && err.code === 'storage_full') return 'full';
  if (isAppError(err) && (err.code === 'store_unavailable' || err.code === 'store_timeout')) return 'unavailable';
  if (err instanceof ComposedTooLarge) return 'input';
  const task = taskErrorOf(err);
  // From what crossed the thread (code, field): a worker that died gives neither an input code nor a field.
  return task && isInputError(task.code, task.field) ? 'input' : 'other';
}

/**
 * A message's failed tries since its last success. What FinishingTries holds is also kept in the
 * message's store entry (store/port/messages.ts), so a daemon restarted between tries still ends a
 * message whose input fails on every try.
 */
export interface Failures extends FinishingTries {
  /** An unknown failure was logged (once per message). */
  logged?: boolean;
}

/** Counts one more failed try of kind `kind` whose message is `reason` into `f` (changed in place). */
export function countFailure(f: Failures, kind: FailureKind, reason: string, err: unknown): Failures {
  f.tries++;
  f.same = kind === 'input' && f.last === reason ? f.same + 1 : kind === 'input' ? 1 : 0;
  if (kind === 'input') f.last = reason;
  else delete f.last;
  f.code ??= failureCode(err);
  return f;
}

/** What the store keeps of a message's failures: not whether this run logged them. */
export function keptTries(f: Failures): FinishingTries {
  const { logged: _logged, ...kept } = f;
  return kept;
}

/** The waits between tries (FinishingStageOptions). */
export interface RetryPolicy {
  retryMs: number;
  maxRetryMs: number;
  confirmMs: number;
}

/** A full store is retried soon and more slowly each time (as delivery's recordDurably does): space usually returns within seconds. */
const FULL_RETRY_FIRST_MS = 250;
const FULL_RETRY_MAX_MS = 10_000;

/** The wait before the next try of a message that failed `tries` times, the last time for `kind`. */
export function waitAfter(p: RetryPolicy, kind: FailureKind, tries: number): number {
  if (kind === 'full' || kind === 'unavailable') return Math.min(FULL_RETRY_FIRST_MS * 2 ** (tries - 1), FULL_RETRY_MAX_MS);
  if (kind === 'input') return p.confirmMs;
  return Math.min(p.retryMs * 2 ** Math.min(tries - 1, 20), p.maxRetryMs);
}

/** What the bounced events of a message that cannot be composed say (the store's endUnfinished). */
export function unfinishedFailure(err: unknown, reason: string): UnfinishedFailure {
  return err instanceof ComposedTooLarge
    ? { reason, category: 'message_too_large', enhancedCode: '5.3.4' }
    : { reason, category: 'other', enhancedCode: '5.6.0' };
}
