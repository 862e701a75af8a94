/**
 * The one answer for a store with no room left, whichever engine found it (LMDB's failed commit,
 * store/lmdb/commit-failure.ts; PostgreSQL's disk_full, domain/database-unavailable.ts): nothing
 * of the write was stored, and the same request may succeed once space returns. The API answers
 * 507 and SMTP 452 4.3.1 (errors.ts); delivery outcomes and the finishing stage retry it soon.
 */
import { AppError } from './errors.js';

export function storageFullError(cause: unknown): AppError {
  return new AppError('storage_full', 'The data store is full; nothing was stored. Free disk space and retry.', { cause });
}
