/**
 * The deadline of the PostgreSQL calls a client waits for (store.requestTimeoutMs, cluster mode).
 * A server that hangs (stopped, overloaded, or a network that drops packets) keeps its
 * connections open with no error, so a send waited for its answer with no end: no HTTP answer
 * after 150 s, no SMTP reply. Every store and coordination call made while an HTTP request or an
 * SMTP command is being answered now rejects with store_timeout (503, SMTP 451 4.3.0) once it has
 * had no answer for the deadline; background work (delivery, retention, finishing) has none.
 *
 * The call itself is not cancelled: PostgreSQL may still run and commit it once it answers, so the
 * outcome is unknown, and the client is told to retry with its Idempotency-Key. Its late answer
 * settles a promise no one replies from (lateOutcome gives it to the idempotency gate, which ends
 * its claim only then).
 *
 * The adapters open a scope per request or command (openScope, inScope) and close it once they
 * have answered, so work the request started and left running gets no deadline after that. The
 * call sites (database-unavailable.ts guarded) read the scope with no change to their signatures.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { AppError } from './errors.js';

/** Seconds a client is asked to wait, as for store_unavailable: a hung server rarely recovers at once. */
const RETRY_AFTER_S = 5;

export interface DeadlineScope {
  readonly ms: number;
  /** False once the adapter has answered: calls made after that have no deadline. */
  open: boolean;
}

const scopes = new AsyncLocalStorage<DeadlineScope>();
const lateCalls = new WeakMap<AppError, Promise<unknown>>();

/** A scope for one request or command; undefined when there is no deadline (0: LMDB, one node). */
export function openScope(ms: number): DeadlineScope | undefined {
  return ms > 0 ? { ms, open: true } : undefined;
}

/** Runs fn with the calls it makes, now and in what it awaits, under the scope's deadline. */
export function inScope<T>(scope: DeadlineScope | undefined, fn: () => T): T {
  return scope ? scopes.run(scope, fn) : fn();
}

/** The adapter has answered: calls made from now on in this scope have no deadline. */
export function closeScope(scope: DeadlineScope | undefined): void {
  if (scope) scope.open = false;
}

/** Work of one command (an SMTP listener's) in a scope of its own, closed once the work has settled. */
export function underDeadline<T>(ms: number, work: () => Promise<T>): Promise<T> {
  if (ms <= 0) return work(); // no deadline (LMDB): not one promise more per command
  const scope = openScope(ms);
  return inScope(scope, work).finally(() => closeScope(scope));
}

/** The call, or store_timeout once it has had no answer for the deadline of the scope it is made in. */
export function withinDeadline<T>(call: Promise<T>): Promise<T> {
  const scope = scopes.getStore();
  if (!scope?.open) return call;
  const { ms } = scope;
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(storeTimeoutError(call, ms)), ms);
    call.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (err: unknown) => {
        clearTimeout(timer);
        reject(err);
      },
    );
  });
}

/** The call a store_timeout gave up on, which may still settle (and commit); undefined for any other error. */
export function lateOutcome(err: unknown): Promise<unknown> | undefined {
  return err instanceof AppError ? lateCalls.get(err) : undefined;
}

function storeTimeoutError(call: Promise<unknown>, ms: number): AppError {
  const err = new AppError(
    'store_timeout',
    `The store did not answer within ${ms} ms, so whether the request took effect is unknown: retry it (a send with the same Idempotency-Key)`,
    { headers: { 'Retry-After': String(RETRY_AFTER_S) } },
  );
  lateCalls.set(err, call);
  return err;
}
