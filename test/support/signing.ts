/**
 * Messages are DKIM-signed after their commit (src/submission/finishing.ts): a test that reads the
 * stored body for its signature waits for that step first.
 */
import type { Store } from '../../src/store/env.js';
import { getBody } from '../../src/store/messages.js';
import { awaitsSignature } from '../../src/store/signing.js';
import { waitFor } from './wait.js';

/** The stored body once the signing stage has replaced it with the signed message. */
export async function signedBody(store: Store, messageId: string): Promise<Buffer> {
  await waitFor(() => !awaitsSignature(store, messageId), { what: `the DKIM signature of message ${messageId}` });
  return getBody(store, messageId)!;
}
