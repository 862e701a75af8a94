import type { PgContext } from '../context.js';
import type { BroadcastsPort } from '../../port/broadcasts.js';
import { pending } from './pending.js';

export function pgBroadcasts(_ctx: PgContext): BroadcastsPort {
  return pending<BroadcastsPort>('Broadcasts');
}
