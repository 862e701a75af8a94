/**
 * A PostgreSQL that cannot be reached, as one answer (issue 32, Faults): the error of a query
 * that failed because the database is out of reach (refused, reset, timed out, shutting down,
 * too many connections) becomes AppError store_unavailable, which the API answers 503 with
 * Retry-After and SMTP 451 4.3.0, instead of a 500. Nothing of that write committed, unless the
 * connection broke during COMMIT itself, when the outcome is unknown: the client's retry (with
 * its idempotency key) is then the safe path, and a 200 was still never given for it.
 *
 * A server whose disk is full (disk_full) is answered as LMDB's full disk is: storage_full.
 *
 * Here, as pure rules over error codes, because both users of PostgreSQL need them and neither
 * may import the other: the store engine (store/postgres/unavailable.ts) and the cluster
 * coordination (coordination/postgres/), whose shared limits answer for every request.
 */
import { AppError } from './errors.js';
import { withinDeadline } from './request-deadline.js';
import { storageFullError } from './storage-full.js';

/** Seconds a client is asked to wait: a failover or restart of PostgreSQL takes a few. */
const RETRY_AFTER_S = 5;

/** Node's socket errors and postgres.js' own connection errors. */
const CONNECTION_ERRORS = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
  'CONNECT_TIMEOUT',
  'CONNECTION_CLOSED',
  'CONNECTION_ENDED',
  'CONNECTION_DESTROYED',
]);

/**
 * SQLSTATEs of a server that is there but will not serve now: 57P01 admin_shutdown, 57P02
 * crash_shutdown, 57P03 cannot_connect_now (starting up, recovering), 53300
 * too_many_connections; class 08 is connection_exception.
 */
function unavailableState(code: string): boolean {
  return code === '57P01' || code === '57P02' || code === '57P03' || code === '53300' || code.startsWith('08');
}

/**
 * Longest wait, in seconds, between two connection attempts of a postgres.js pool while the
 * server cannot be reached. postgres.js's own backoff grows as 3^attempts up to 20 s and, while
 * it waits, fails every query at once with the last connection error: after an outage of a few
 * seconds (a restart, a failover) a node kept answering 503 for up to 20 s more (7 s measured by
 * the cluster test after a 3 s outage). One attempt a second per pool costs the server nothing.
 */
export const RECONNECT_BACKOFF_MAX_S = 1;

/** postgres.js's `backoff` option: its own curve (jittered, 3^retries / 100 s), capped at RECONNECT_BACKOFF_MAX_S. */
export function reconnectBackoff(retries: number): number {
  return (0.5 + Math.random() / 2) * Math.min(3 ** retries / 100, RECONNECT_BACKOFF_MAX_S);
}

export function isUnavailable(err: unknown): boolean {
  if (typeof err !== 'object' || err === null || !('code' in err)) return false;
  const code = String((err as { code: unknown }).code);
  return CONNECTION_ERRORS.has(code) || unavailableState(code);
}

/**
 * SQLSTATE 53100 disk_full: the server could not extend a file (ENOSPC). The statement and its
 * transaction wrote nothing, as with LMDB's failed commit, and the answer is the same:
 * storage_full (domain/storage-full.ts), so a cluster whose database fills up answers 507 and
 * SMTP 452 instead of a 500, and its delivery outcomes are retried until space returns.
 */
export function isDiskFull(err: unknown): boolean {
  return typeof err === 'object' && err !== null && (err as { code?: unknown }).code === '53100';
}

export function unavailableError(cause: unknown): AppError {
  return new AppError('store_unavailable', 'The store cannot be reached; nothing was stored. Retry shortly.', {
    headers: { 'Retry-After': String(RETRY_AFTER_S) },
    cause,
  });
}


/**
 * The object with every asynchronous method's connection failure mapped to store_unavailable,
 * and a full disk to storage_full; a call made for a client past its deadline rejects with
 * store_timeout (request-deadline.ts). A synchronous method (QueuePort.channelDeleted) is passed
 * through as it is.
 */
export function guarded<T extends object>(target: T): T {
  return new Proxy(target, {
    get(t, prop, receiver) {
      const value: unknown = Reflect.get(t, prop, receiver);
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        const result: unknown = (value as (...a: unknown[]) => unknown).apply(t, args);
        if (!(result instanceof Promise)) return result;
        const mapped = result.catch((err: unknown) => {
          throw isUnavailable(err) ? unavailableError(err) : isDiskFull(err) ? storageFullError(err) : err;
        });
        return withinDeadline(mapped);
      };
    },
  });
}
