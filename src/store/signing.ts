/**
 * Messages waiting for their DKIM signature (the `unsigned` database, layout.ts). A message is
 * committed unsigned with its entry here and its jobs outside jobsDue (messages.ts); the signing
 * stage (submission/signing.ts) reads the committed body, signs it in the worker pool and stores
 * the result with storeSignedBodies, which puts the jobs in jobsDue in the same transaction. The
 * entry goes only then, so whatever happens in between (a crash, a stop, a failed task), the
 * step is simply run again from what was committed.
 */
import { dbsOf } from './databases.js';
import type { Store } from './env.js';
import { jobsOfMessage } from './message-jobs.js';
import { putDueInTxn } from './queue.js';

/** Who signs: the message's account and the d= domain whose current key is used. */
export interface PendingSignature {
  accountId: string;
  domain: string;
}

/** Inside commitMessages' write: the message is to be signed after the commit. */
export function putPendingSignatureInTxn(store: Store, messageId: string, p: PendingSignature): void {
  dbsOf(store).unsigned.put(messageId, p);
}

/** Every message still waiting for its signature (at start: those a stop or crash left behind). */
export function pendingSignatures(store: Store): string[] {
  return [...dbsOf(store).unsigned.getKeys({})].map((k) => String(k));
}

/** How many messages wait for their signature (the database's entry count: O(1), read per metrics scrape). */
export function awaitingSignatureCount(store: Store): number {
  return (dbsOf(store).unsigned.getStats() as { entryCount: number }).entryCount;
}

/**
 * What to sign: the entry and the committed body; undefined when the message no longer waits.
 * The body is missing when the message went (channel purge, retention) before it was signed.
 */
export function unsignedMessage(store: Store, messageId: string): (PendingSignature & { body: Buffer | undefined }) | undefined {
  const p = dbsOf(store).unsigned.get(messageId) as PendingSignature | undefined;
  if (!p) return undefined;
  return { ...p, body: dbsOf(store).bodies.get(messageId) as Buffer | undefined };
}

/**
 * Stores signed bodies, ends their wait and makes their messages' queued jobs due (their dueAt
 * is the commit time, so they are due at once), all in one write. A message that is gone (its
 * channel purged) only loses its entry; a job canceled meanwhile (a broadcast's cancel) stays
 * done; a message signed twice (a retry that raced) is stored once. Returns how many jobs
 * became due.
 */
export async function storeSignedBodies(store: Store, signed: ReadonlyArray<{ messageId: string; body: Uint8Array }>): Promise<number> {
  return store.write(() => {
    let released = 0;
    for (const s of signed) released += storeSignedInTxn(store, s.messageId, s.body);
    return released;
  });
}

function storeSignedInTxn(store: Store, messageId: string, signed: Uint8Array): number {
  const dbs = dbsOf(store);
  if (dbs.unsigned.get(messageId) === undefined) return 0;
  dbs.unsigned.remove(messageId);
  if (dbs.bodies.get(messageId) === undefined) return 0;
  dbs.bodies.put(messageId, Buffer.from(signed.buffer, signed.byteOffset, signed.byteLength));
  let released = 0;
  for (const job of jobsOfMessage(store, messageId)) {
    if (job.state !== 'queued') continue;
    putDueInTxn(store, job);
    released++;
  }
  return released;
}

/** Whether the message was committed unsigned and is not signed yet. */
export function awaitsSignature(store: Store, messageId: string): boolean {
  return dbsOf(store).unsigned.get(messageId) !== undefined;
}
