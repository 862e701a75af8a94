/**
 * The vocabulary of a delivery attempt's outcome, shared by the bounce rules table
 * (bounce-rules.ts), the classifier that applies it (smtp-reply.ts) and the attempt's result
 * (delivery-result.ts). Types and the category list, no logic.
 */

/** Where in the delivery the reply (or failure) happened. */
export type DeliveryPhase = 'dns' | 'connect' | 'tls' | 'greeting' | 'ehlo' | 'mail' | 'rcpt' | 'data' | 'message';

export type Outcome = 'delivered' | 'deferred' | 'bounced';

/** hard: the address is bad (suppressed). soft: this message failed, the address may be fine. */
export type BounceType = 'hard' | 'soft';

export const BOUNCE_CATEGORIES = [
  'delivered',
  'mailbox_full',
  'unknown_user',
  'greylisted',
  'policy',
  'spam',
  'dns',
  'tls',
  'connection',
  'rate_limited',
  'message_too_large',
  'other',
] as const;
export type BounceCategory = (typeof BOUNCE_CATEGORIES)[number];
