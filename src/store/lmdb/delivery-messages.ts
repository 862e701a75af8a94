/**
 * The message record of a delivery attempt, decoded once: read when the attempt starts
 * (MessagesPort.withBody) and again inside its outcome's write (queue-outcome.ts), which needs
 * the record as committed (its open-job count). The decoded record is kept in the store's cache
 * (read-caches.ts) with the exact bytes it came from; the outcome's write reads the bytes and,
 * when they are the same, uses the record decoded at the start instead of decoding it again
 * (bench --profile, issue 36: "the message record decoded twice per attempt"). A write to the
 * record meanwhile (another job of the message finished) changes the bytes, and it is decoded
 * afresh. The entry goes at the outcome, so the cache holds the attempts in flight.
 */
import type { MessageRecord } from '../../domain/types.js';
import { peekBytes } from './bytes.js';
import { cachesOf, dbsOf } from './databases.js';
import type { Store } from './env.js';

/** The message record for an attempt that starts now, remembered for its outcome. */
export function messageForAttempt(store: Store, id: string): MessageRecord | undefined {
  const db = dbsOf(store).messages;
  // Valid until the next read (lmdb-js reuses the buffer): copied before the next one.
  const bytes = peekBytes(db, id);
  if (!bytes) return undefined;
  const copy = Buffer.from(bytes);
  const message = decodeCopy(db, copy) ?? (db.get(id) as MessageRecord | undefined);
  if (message) cachesOf(store).deliveryMessages.set(id, { bytes: copy, message });
  return message;
}

/**
 * The record decoded from our own copy of its bytes, as lmdb-js's get() decodes what it read
 * (its msgpackr decoder, which knows the database's shared structures): the copy is stable, so
 * the record may keep views of it. Undefined when this lmdb-js has no decoder to lend, and the
 * caller reads the record again the usual way.
 */
function decodeCopy(db: object, bytes: Buffer): MessageRecord | undefined {
  const decoder = (db as { decoder?: { decode?: (b: Buffer) => unknown } }).decoder;
  return typeof decoder?.decode === 'function' ? (decoder.decode(bytes) as MessageRecord) : undefined;
}

/** Inside the outcome's write: the record as stored now, decoded at the attempt's start when its bytes did not change. */
export function messageForOutcomeInTxn(store: Store, id: string): MessageRecord | undefined {
  const cache = cachesOf(store).deliveryMessages;
  const hit = cache.get(id);
  cache.delete(id);
  const db = dbsOf(store).messages;
  const bytes = peekBytes(db, id);
  if (!bytes) return undefined;
  if (hit && hit.bytes.equals(bytes)) return hit.message;
  return db.get(id) as MessageRecord | undefined;
}
