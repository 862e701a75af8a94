/**
 * Messages are DKIM-signed after their commit (src/submission/finishing.ts): a test that reads the
 * stored body for its signature waits for that step first. A receiver's view of the signature:
 * mailauth's verifier with the keys looked up in the test DNS server.
 */
import { Resolver } from 'node:dns/promises';
import { dkimVerify } from 'mailauth/lib/dkim/verify.js';
import type { StorePort } from '../../src/store/port/index.js';
import type { TestDns } from './dns-server.js';
import { waitFor } from './wait.js';

/**
 * Waits until the finishing stage has composed and signed the message (or ended it): a sandbox
 * message sent now gets its simulated outcome in that same write (domain/sandbox-outcome.ts).
 */
export async function finishedMessage(store: Pick<StorePort, 'messages'>, messageId: string, what = `message ${messageId} finished`): Promise<void> {
  await waitFor(async () => !(await store.messages.isUnfinished(messageId)), { what });
}

/** The stored body once the signing stage has replaced it with the signed message. */
export async function signedBody(store: Pick<StorePort, 'messages'>, messageId: string): Promise<Buffer> {
  await finishedMessage(store, messageId, `the DKIM signature of message ${messageId}`);
  return (await store.messages.body(messageId))!;
}

/** The TXT records at `name` as a verifier gets them from the test DNS server (each record's strings not joined). */
export async function lookupTxt(dns: Pick<TestDns, 'address'>, name: string): Promise<string[][]> {
  const resolver = new Resolver();
  resolver.setServers([dns.address]);
  return resolver.resolveTxt(name);
}

/** mailauth's DKIM verdict on `raw`, each signature's key looked up in the test DNS server. */
export function verifyDkim(dns: Pick<TestDns, 'address'>, raw: Buffer): ReturnType<typeof dkimVerify> {
  return dkimVerify(raw, { resolver: async (name: string) => lookupTxt(dns, name) });
}
