/**
 * PostgreSQL out of reach becomes one answer: every verb of the engine that fails because the
 * database cannot be reached rejects with AppError store_unavailable (domain/database-unavailable.ts
 * says which errors and why). postgres.js reconnects by itself on the next query, so the node
 * needs no restart when the database comes back.
 */
export { guarded, isUnavailable, unavailableError } from '../../domain/database-unavailable.js';
