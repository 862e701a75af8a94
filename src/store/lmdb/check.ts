/**
 * `postrider store check`: everything Store.start checks (folder marker, meta pages, file size,
 * LMDB's environment info, every database's root), then a walk over every entry of every
 * database, keys and values decoded, which reads every page a request could ever reach. Safe
 * while the daemon runs: the store is opened read-only and read in one snapshot per database.
 */
import { dbsOf } from './databases.js';
import { Store, type Dbs } from './env.js';
import { damaged, inspectDataFile, type DataFileInfo } from './data-file.js';
import { DB_NAMES } from './layout.js';
import { markerDate } from './marker.js';
import { StoreProblem } from '../port/problems.js';

export interface StoreReport {
  file: string;
  /** Creation date from the data folder's marker; null before the first start of this version. */
  createdAt: string | null;
  data: DataFileInfo;
  databases: { name: string; entries: number }[];
}

export async function checkStore(dataDir: string): Promise<StoreReport> {
  const store = new Store({ dataDir, readOnly: true });
  await store.start();
  try {
    const databases: StoreReport['databases'] = [];
    for (const name of DB_NAMES) {
      const db = dbsOf(store)[name];
      if (!db) continue; // not created yet by the postrider that wrote this store
      databases.push({ name, entries: walk(store.file, name, db) });
    }
    return { file: store.file, createdAt: markerDate(dataDir), data: inspectDataFile(store.file), databases };
  } finally {
    await store.stop();
  }
}

/**
 * Reads every entry (decoding its value) and compares the count with LMDB's own entry count.
 * Walk and count run in one synchronous turn, so lmdb-js serves both from one read snapshot
 * even while the daemon writes.
 */
function walk(file: string, name: string, db: Dbs[keyof Dbs]): number {
  let entries = 0;
  try {
    for (const _ of db.getRange({ snapshot: true })) entries++;
  } catch (err) {
    if (err instanceof StoreProblem) throw err;
    throw damaged(file, `database "${name}" cannot be read after ${entries} entries (${(err as Error).message})`);
  }
  const counted = (db.getStats() as { entryCount: number }).entryCount;
  if (counted !== entries) throw damaged(file, `database "${name}" has ${entries} readable entries, LMDB counts ${counted}`);
  return entries;
}
