import type { PgContext } from '../context.js';
import type { RetentionPort } from '../../port/retention.js';
import { pending } from './pending.js';

export function pgRetention(_ctx: PgContext): RetentionPort {
  return pending<RetentionPort>('Retention');
}
