/**
 * The delivery attempts of a message as the API's message details show them: the transport
 * security tests (TLS fallback, MTA-STS, DANE) send one message and read its first attempt.
 */
import { expect } from 'vitest';
import type { TestDaemon } from './daemon.js';
import type { Sender } from './sending.js';
import { waitFor } from './wait.js';

/** One attempt of `GET /activity/messages/{id}`, with the fields these tests read. */
export interface Attempt {
  outcome: string;
  mx?: string;
  response: string;
  tls?: boolean;
  tlsDetail?: { protocol?: string; verified?: boolean; reason?: string; dane?: string };
  mtaSts?: { mode: string; id: string; failure?: string };
}

/** Sends one message from the sender to `to` and answers its first recorded attempt. */
export async function firstAttempt(t: TestDaemon, s: Sender, to: string, subject: string): Promise<Attempt> {
  const res = await t.api('POST', '/send/transactional', {
    headers: { 'x-service-channel-id': s.channelId },
    body: { from: { email: `app@${s.domain}` }, to: [{ email: to }], subject, text: 'Hello' },
  });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  const id = res.body.messageId as string;
  return waitFor(
    async () => {
      const details = await t.api('GET', `/activity/messages/${id}`);
      return (details.body.attempts as Attempt[] | undefined)?.[0];
    },
    { what: `the first attempt to ${to}`, timeout: 15_000 },
  );
}
