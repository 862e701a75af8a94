/**
 * A large binary value read back without holding the event loop for all of it. Copying a value
 * out of LMDB is cheap into memory already touched (34 MB in about 2 ms here) but not into a new
 * array of tens of MB: the first write to each of its pages is a page fault, about 100 ms for a
 * 34 MB received message on this 2-core machine (a 25 MB attachment), all on the main thread,
 * where the HTTP API, the SMTP listeners and the scheduler run
 * (test/integration/inbound-event-loop.test.ts). So the new array's pages are touched a MiB per
 * turn first, and the value is copied into it in one turn at the end, from the snapshot of one
 * read transaction held throughout (Store.holdingRead): lmdb-js answers a value up to 16 MiB in
 * its one reusable read buffer, which the next read anywhere overwrites, and a larger one as a
 * view into the map, valid while the transaction is held.
 *
 * The values are MessagePack bin (what msgpackr writes for a Buffer): a marker and a length
 * before the bytes (msgpack spec, "bin format family").
 */
import { setImmediate as nextTurn } from 'node:timers/promises';
import { copyInParts, TURN_BYTES } from '../../domain/bytes.js';
import { encodedValue, type Dbs, type Encoded, type Store } from './env.js';
import { storedBytes } from './bytes.js';

/** Pages touched per turn, and the size up to which a value is simply read (a few ms at most). */
const PART = TURN_BYTES;

type BinaryRead = (id: unknown, options: { transaction: unknown }) => Uint8Array | undefined;

/** The bytes stored at `id` in `db`, as db.get would answer them; undefined when there are none. */
async function bytesInTurns(store: Store, db: Dbs[keyof Dbs], id: string): Promise<Buffer | undefined> {
  return store.holdingRead(async (transaction) => {
    // lmdb-js sets `length` of its reusable buffer to the value's size; a view is exactly the value.
    const encoded = (db.getBinaryFast as unknown as BinaryRead).call(db, id, { transaction });
    if (!encoded) return undefined;
    const bin = binSpan(encoded.subarray(0, encoded.length));
    // Not a bin: decoded as any other value. Small: copied out at once.
    if (!bin) return storedBytes(db.get(id, { transaction } as never));
    if (bin.length <= PART) return Buffer.from(encoded.subarray(bin.start, bin.start + bin.length));
    const out = Buffer.allocUnsafe(bin.length);
    for (let at = 0; at < bin.length; at += PART) {
      if (at > 0) await nextTurn();
      out.fill(0, at, Math.min(at + PART, bin.length));
    }
    // The same snapshot: the same bytes, read again since the reusable buffer may hold another value by now.
    const again = (db.getBinaryFast as unknown as BinaryRead).call(db, id, { transaction })!;
    out.set(again.subarray(bin.start, bin.start + bin.length));
    return out;
  });
}

/**
 * The bytes stored at `id` in `db`, for reads on the main thread's hot paths (a delivery's body,
 * the finishing stage's): a value up to a MiB is copied out of the current read at once, as
 * db.get would; a larger one is read a part per turn (bytesInTurns). Only for values that are
 * written whole and never changed in part (a body is replaced by its signed form, or removed):
 * the large read may see a later snapshot than the reads before it in the same turn.
 */
export async function readBytes(store: Store, db: Dbs[keyof Dbs], id: string): Promise<Buffer | undefined> {
  const encoded = db.getBinaryFast(id);
  if (!encoded) return undefined;
  const bin = binSpan(encoded.subarray(0, encoded.length));
  if (!bin) return storedBytes(db.get(id));
  if (bin.length <= PART) return Buffer.from(encoded.subarray(bin.start, bin.start + bin.length));
  return bytesInTurns(store, db, id);
}

/** Where a MessagePack bin 8/16/32 value's bytes start and how many there are; null for any other value. */
export function binSpan(v: Uint8Array): { start: number; length: number } | null {
  const view = new DataView(v.buffer, v.byteOffset, v.byteLength);
  let span: { start: number; length: number } | null = null;
  if (v[0] === 0xc4 && v.byteLength >= 2) span = { start: 2, length: v[1] };
  else if (v[0] === 0xc5 && v.byteLength >= 3) span = { start: 3, length: view.getUint16(1) };
  else if (v[0] === 0xc6 && v.byteLength >= 5) span = { start: 5, length: view.getUint32(1) };
  return span && span.start + span.length <= v.byteLength ? span : null;
}

/**
 * A large value for put, encoded ahead of the write: `bytes` as the MessagePack bin 32 msgpackr
 * writes for a Buffer of this size, copied into a new array a MiB per turn. Inside the write's
 * callback msgpackr would copy it into new memory at once (70-80 ms for 24 MB, a message with an
 * 18 MB attachment), within the commit that holds the main thread anyway. Values up to a MiB are
 * left to msgpackr (undefined here).
 */
export async function encodedInTurns(bytes: Uint8Array): Promise<Encoded | undefined> {
  if (bytes.byteLength <= PART) return undefined;
  const out = Buffer.allocUnsafe(5 + bytes.byteLength);
  out[0] = 0xc6;
  out.writeUInt32BE(bytes.byteLength, 1);
  for (const _ of copyInParts(out, [bytes], 5)) await nextTurn();
  return encodedValue(out);
}

/** The values of `list` encodedInTurns makes, by key; the small ones are not in the map. */
export async function encodedEach<T>(list: readonly T[], key: (item: T) => string, bytes: (item: T) => Uint8Array | undefined): Promise<Map<string, Encoded>> {
  const out = new Map<string, Encoded>();
  for (const item of list) {
    const b = bytes(item);
    // Checked here as well: the common small body costs no await before the commit.
    if (b && b.byteLength > PART) out.set(key(item), (await encodedInTurns(b))!);
  }
  return out;
}
