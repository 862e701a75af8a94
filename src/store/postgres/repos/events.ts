import type { PgContext } from '../context.js';
import type { EventsPort } from '../../port/events.js';
import { pending } from './pending.js';

export function pgEvents(_ctx: PgContext): EventsPort {
  return pending<EventsPort>('Events');
}
