/**
 * The LMDB environment: the only place in postrider that imports lmdb.
 *
 * Durability: every acknowledged write goes through `write()`, which runs the callback as an
 * LMDB child transaction inside lmdb-js's current write batch and then waits for that batch to
 * be flushed (fsync) to disk. All writes queued in one event-loop turn share one commit and one
 * flush, which is the group commit DESIGN.md asks for: many concurrent requests, one sync.
 * A callback that throws rolls back its own writes (child transaction) and rejects.
 */
import fs from 'node:fs';
import path from 'node:path';
import { open, type Database, type RootDatabase } from 'lmdb';
import { DB_NAMES, SCHEMA_VERSION, type DbName } from './layout.js';

export interface StoreOptions {
  dataDir: string;
  /** Read-only opening, for inspection commands; the daemon and the CLI may also share one
   *  environment read-write, since LMDB is safe across processes. */
  readOnly?: boolean;
}

export type Dbs = Record<DbName, Database<any, any>>;

export class Store {
  private rootDb: RootDatabase<any, any> | null = null;
  private dbsOpen: Dbs | null = null;

  constructor(private readonly opts: StoreOptions) {}

  get path(): string {
    return path.join(this.opts.dataDir, 'db');
  }

  async start(): Promise<void> {
    fs.mkdirSync(this.path, { recursive: true, mode: 0o700 });
    const root = open({ path: this.path, maxDbs: 64, readOnly: this.opts.readOnly ?? false });
    const dbs = {} as Dbs;
    for (const name of DB_NAMES) dbs[name] = root.openDB(name, {});
    this.rootDb = root;
    this.dbsOpen = dbs;
    const version = dbs.meta.get('schemaVersion') as number | undefined;
    if (version !== undefined && version > SCHEMA_VERSION) {
      await this.stop();
      throw new Error(`data folder was written by a newer postrider (schema ${version} > ${SCHEMA_VERSION})`);
    }
    if (version === undefined && !this.opts.readOnly) await this.write(() => dbs.meta.put('schemaVersion', SCHEMA_VERSION));
  }

  async stop(): Promise<void> {
    const root = this.rootDb;
    this.rootDb = null;
    this.dbsOpen = null;
    if (root) {
      await root.flushed;
      await root.close();
    }
  }

  get isOpen(): boolean {
    return this.rootDb !== null;
  }

  get db(): Dbs {
    if (!this.dbsOpen) throw new Error('store is not open');
    return this.dbsOpen;
  }

  /** Atomic and durable: resolves once the writes made by fn are committed and synced. */
  async write<T>(fn: () => T): Promise<T> {
    const root = this.root();
    const result = (await root.childTransaction(fn as () => any)) as T;
    await root.flushed;
    return result;
  }

  /** Bytes used by the environment's data file (for metrics and the disk-full checks). */
  sizeBytes(): number {
    try {
      return fs.statSync(path.join(this.path, 'data.mdb')).size;
    } catch {
      return 0;
    }
  }

  private root(): RootDatabase<any, any> {
    if (!this.rootDb) throw new Error('store is not open');
    return this.rootDb;
  }
}
