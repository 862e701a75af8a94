/**
 * The key-level access rule of spec section 5 that every resource service applies to its writes:
 * a channel-level key may read what its channel sees, but creating, changing or deleting channels,
 * domains and webhooks needs an account-level key (403 forbidden). The per-record rules (another
 * account's record, another channel's) live with each resource (channels/service.ts accessibleChannel,
 * DomainService.visibleTo, WebhookService.visibleTo).
 */
import { AppError } from './errors.js';
import type { Principal } from './types.js';

export function requireAccountKey(p: Principal): void {
  if (p.channelId) throw new AppError('forbidden', 'This operation needs an account-level API key');
}
