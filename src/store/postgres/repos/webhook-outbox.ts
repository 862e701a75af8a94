import type { PgContext } from '../context.js';
import type { WebhookOutboxPort } from '../../port/webhooks.js';
import { pending } from './pending.js';

export function pgWebhookOutbox(_ctx: PgContext): WebhookOutboxPort {
  return pending<WebhookOutboxPort>('WebhookOutbox');
}
