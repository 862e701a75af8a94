/**
 * The API's answers as the daemon declares them (src/domain/wire.ts, which its route handlers
 * return): pages import these with `import type`, so nothing of the daemon reaches the bundle.
 * That file imports nothing, which keeps node's types out of this (DOM-only) type check.
 */
export type * from '../../src/domain/wire';
