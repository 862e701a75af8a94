import type { PgContext } from '../context.js';
import type { IdempotencyPort } from '../../port/idempotency.js';
import { pending } from './pending.js';

export function pgIdempotency(_ctx: PgContext): IdempotencyPort {
  return pending<IdempotencyPort>('Idempotency');
}
