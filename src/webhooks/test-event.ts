/**
 * The payload of POST /webhooks/{id}/test: a real event type with test data, in the exact shape
 * of that type's real payloads (domain/webhook.ts payloadsOf), plus `test: true`. The message id
 * is fresh and names no message; the recipient is at example.com (RFC 2606: reserved, never
 * anyone's mailbox), so a receiver that acts on it harms no one. No spec names a test event
 * (api-spec.md, api-surface.md): a real type lets receivers run their real code path.
 */
import { randomUUID } from 'node:crypto';
import type { EventRecord, EventType } from '../domain/types.js';
import { payloadsOf, type Webhook, type WebhookPayload } from '../domain/webhook.js';

/** A webhook for every channel has no channel to name: the test payload then carries this. */
export const NO_CHANNEL_ID = '00000000-0000-0000-0000-000000000000';
export const TEST_RECIPIENT = 'recipient@example.com';

/** Details as delivery, inbound reports and tracking write them for each type, with test values. */
const DETAILS: Partial<Record<EventType, Record<string, unknown>>> = {
  delivered: { smtpCode: 250, enhancedCode: '2.0.0', response: '250 2.0.0 OK (test)', mx: 'mx.example.com', tls: true, attempt: 1 },
  bounced: { smtpCode: 550, enhancedCode: '5.1.1', response: '550 5.1.1 No such user (test)', mx: 'mx.example.com', bounceType: 'hard', category: 'unknown_user', attempt: 1 },
  opened: { ip: '192.0.2.1', userAgent: 'Mozilla/5.0 (test)' },
  clicked: { ip: '192.0.2.1', userAgent: 'Mozilla/5.0 (test)', link: 'https://example.com/' },
};

export type TestPayload = WebhookPayload & { test: true };

export function testPayload(w: Pick<Webhook, 'accountId' | 'channelId'>, eventType: EventType, now: Date): TestPayload {
  const event: EventRecord = {
    seq: 0,
    accountId: w.accountId,
    channelId: w.channelId ?? NO_CHANNEL_ID,
    messageId: randomUUID(),
    mailType: 'transactional',
    mailSource: 'api',
    eventType,
    timestamp: now.toISOString(),
    subject: 'postrider test event',
    recipients: [TEST_RECIPIENT],
    tags: ['test'],
    metadata: {},
    details: { ...(DETAILS[eventType] ?? {}) },
  };
  return { ...payloadsOf(event)[0].payload, test: true };
}
