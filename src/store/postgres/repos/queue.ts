import type { PgContext } from '../context.js';
import type { QueuePort } from '../../port/queue.js';
import { pending } from './pending.js';

export function pgQueue(_ctx: PgContext): QueuePort {
  return pending<QueuePort>('Queue');
}
