import type { PgContext } from '../context.js';
import type { MessagesPort } from '../../port/messages.js';
import { pending } from './pending.js';

export function pgMessages(_ctx: PgContext): MessagesPort {
  return pending<MessagesPort>('Messages');
}
