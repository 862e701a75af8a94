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
import type { Dbs, Store } from './env.js';
import { storedBytes } from './bytes.js';

/** Pages touched per turn, and the size up to which a value is simply read (a few ms at most). */
const PART = 1 << 20;

type BinaryRead = (id: unknown, options: { transaction: unknown }) => Uint8Array | undefined;

/** The bytes stored at `id` in `db`, as db.get would answer them; undefined when there are none. */
export async function bytesInTurns(store: Store, db: Dbs[keyof Dbs], id: string): Promise<Buffer | undefined> {
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

/** Where a MessagePack bin 8/16/32 value's bytes start and how many there are; null for any other value. */
export function binSpan(v: Uint8Array): { start: number; length: number } | null {
  const view = new DataView(v.buffer, v.byteOffset, v.byteLength);
  let span: { start: number; length: number } | null = null;
  if (v[0] === 0xc4 && v.byteLength >= 2) span = { start: 2, length: v[1] };
  else if (v[0] === 0xc5 && v.byteLength >= 3) span = { start: 3, length: view.getUint16(1) };
  else if (v[0] === 0xc6 && v.byteLength >= 5) span = { start: 5, length: view.getUint32(1) };
  return span && span.start + span.length <= v.byteLength ? span : null;
}
