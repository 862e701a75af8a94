/** Sends for the Activity, message and Sandbox inbox browser tests: through the API, as users do. */
import { expect } from 'vitest';
import type { Sender } from '../support/sending.js';
import { signedBody } from '../support/signing.js';
import type { Rig } from './harness.js';

export async function sendMail(rig: Rig, s: Sender, body: Record<string, unknown>): Promise<string> {
  const r = await rig.t.api('POST', '/send/transactional', {
    headers: { 'x-service-channel-id': s.channelId },
    body: { from: { email: `app@${s.domain}`, name: 'Demo App' }, to: [{ email: 'reader@inbox-demo.net' }], subject: 'hello', text: 'hi', ...body },
  });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  // Composed and signed after the commit: the header fields exist from then on.
  await signedBody(rig.t.daemon.store, r.body.messageId);
  return r.body.messageId;
}
