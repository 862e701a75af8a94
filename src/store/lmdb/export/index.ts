/**
 * The LMDB store's side of `postrider store copy-to-postgres` (issue 32): everything the store
 * keeps, as the plain transfer records of the port (store/port/transfer.ts), kind after kind in
 * batches, and the store's own counts of them for the copy's check. Only the CLI uses it, on a
 * store opened read-only while the data folder's lock keeps any daemon out, so every read sees
 * one unchanging store.
 */
import type { TransferBatch, TransferCounts, TransferKind, TransferRecords, TransferSource } from '../../port/transfer.js';
import { dbsOf } from '../databases.js';
import type { Store } from '../env.js';
import { inBatches } from './batches.js';
import type { ExportContext } from './context.js';
import { countsOf, sizesOf } from './counts.js';
import { sources } from './sources.js';

export interface LmdbExportOptions {
  /** The copy's time (ms): leased jobs are copied due then. */
  nowMs: number;
  /** Records per batch (default 1,000). */
  batchRecords?: number;
}

export function lmdbExport(store: Store, o: LmdbExportOptions): TransferSource {
  const c: ExportContext = { dbs: dbsOf(store), nowMs: o.nowMs, derived: { engagementMarks: 0 } };
  return {
    sizes: () => sizesOf(c),
    batches: () => batches(c, o.batchRecords),
    counts: (): TransferCounts => countsOf(c),
  };
}

async function* batches(c: ExportContext, max: number | undefined): AsyncGenerator<TransferBatch> {
  const from = sources();
  for (const kind of Object.keys(from) as TransferKind[]) {
    const records = from[kind](c) as Iterable<TransferRecords[TransferKind]>;
    for (const batch of inBatches(records, sizeOf(kind), max)) yield { kind, records: batch } as TransferBatch;
  }
}

/**
 * Bytes that make a batch large: message bodies and received messages' raw bytes, the records' own text and HTML parts, and the
 * requests waiting to be composed (which may hold whole attachments). Every other record is small.
 */
function sizeOf(kind: TransferKind): ((r: unknown) => number) | undefined {
  if (kind === 'messageBodies') return (r) => (r as TransferRecords['messageBodies']).body.byteLength;
  if (kind === 'inboundMessages') return (r) => (r as TransferRecords['inboundMessages']).raw.byteLength;
  if (kind === 'messages') return (r) => ((r as TransferRecords['messages']).text?.length ?? 0) + ((r as TransferRecords['messages']).html?.length ?? 0);
  if (kind === 'unfinishedMessages') return (r) => JSON.stringify((r as TransferRecords['unfinishedMessages']).compose ?? null).length;
  return undefined;
}
