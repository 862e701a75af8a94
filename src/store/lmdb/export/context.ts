/**
 * What every exporter of the LMDB store (this folder) reads from: the databases of a store
 * opened read-only with the daemon stopped, so every range below sees one unchanging store.
 */
import type { Dbs } from '../env.js';

/** A database, and its range options, named through env.ts: only it imports lmdb (STYLE 4). */
type Database = Dbs[keyof Dbs];
type RangeOptions = NonNullable<Parameters<Database['getRange']>[0]>;

export interface ExportContext {
  dbs: Dbs;
  /** The copy's time: leased jobs become due then. */
  nowMs: number;
  /** Derived records the export made on its way (counted for the check). */
  derived: { engagementMarks: number };
}

export interface Entry {
  key: unknown;
  value: unknown;
}

/**
 * The entries of a database, or none when it is absent: opened read-only, a database that the
 * postrider which wrote the folder did not create yet is undefined (env.ts).
 */
export function entriesOf(db: Database | undefined, range: RangeOptions = {}): Iterable<Entry> {
  return db ? (db.getRange(range) as Iterable<Entry>) : [];
}

export function countOf(db: Database | undefined, range: RangeOptions = {}): number {
  return db ? db.getKeysCount(range) : 0;
}
