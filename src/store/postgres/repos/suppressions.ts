import type { PgContext } from '../context.js';
import type { SuppressionsPort } from '../../port/suppressions.js';
import { pending } from './pending.js';

export function pgSuppressions(_ctx: PgContext): SuppressionsPort {
  return pending<SuppressionsPort>('Suppressions');
}
