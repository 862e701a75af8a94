import type { PgContext } from '../context.js';
import type { WebhooksPort } from '../../port/webhooks.js';
import { pending } from './pending.js';

export function pgWebhooks(_ctx: PgContext): WebhooksPort {
  return pending<WebhooksPort>('Webhooks');
}
