/**
 * Small steps shared by the child-daemon suites that watch network failures (peer resets,
 * unreachable networks): one transactional send, and the webhook attempts the dispatcher logged
 * as failed.
 */
import { expect } from 'vitest';
import type { ChildDaemon } from './child-daemon.js';
import type { Sender } from './sending.js';

/** The dispatcher's log records of failed webhook attempts of one webhook. */
export function failedWebhookAttempts(d: ChildDaemon, webhookId: string): Array<{ attempt: number; error: string }> {
  return d
    .logRecords()
    .filter((l) => l.msg === 'webhook attempt failed, will retry' && l.webhookId === webhookId)
    .map((l) => ({ attempt: l.attempt as number, error: l.error as string }));
}

/** Sends one plain message to `to` and returns its id (the answer must be 200). */
export async function sendOne(d: ChildDaemon, s: Sender, to: string): Promise<string> {
  const res = await d.api('POST', '/send/transactional', {
    headers: { 'x-service-channel-id': s.channelId },
    body: { from: { email: `shop@${s.domain}` }, to: [{ email: to }], subject: 'Order', text: 'Thanks' },
  });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.messageId;
}
