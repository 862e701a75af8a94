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
import { AppError } from '../domain/errors.js';
import { settledWithin } from '../domain/settle.js';
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
      // After a failed commit (full disk) lmdb-js resolves `flushed` and `close()` only after
      // the next successful commit, which may never come. Every acknowledged write was flushed
      // by write() already, so the wait is bounded rather than hanging the shutdown.
      await settledWithin(root.flushed, STOP_WAIT_MS);
      await settledWithin(root.close(), STOP_WAIT_MS);
    }
  }

  get isOpen(): boolean {
    return this.rootDb !== null;
  }

  get db(): Dbs {
    if (!this.dbsOpen) throw new Error('store is not open');
    return this.dbsOpen;
  }

  /**
   * Atomic and durable: resolves once the writes made by fn are committed and synced.
   * A commit that fails for lack of space (full disk, file size limit) rejects with
   * storage_full: nothing of fn was written, and the next write may succeed once space returns.
   */
  async write<T>(fn: () => T): Promise<T> {
    const root = this.root();
    const committed = root.childTransaction(fn as () => any) as Promise<T>;
    // `flushed` follows whichever batch is being filled when it is asked for: asked now, it is
    // the batch of this write. Asked after the commit, it could be a later batch, and a later
    // batch that fails (full disk) never resolves it, which would hang this write.
    const flushed = new Promise<unknown>((resolve, reject) => root.flushed.then(resolve, reject));
    flushed.catch(() => undefined); // a failed commit is reported through `committed`
    try {
      const result = await committed;
      await flushed;
      return result;
    } catch (err) {
      throw await commitFailure(err);
    }
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

const STOP_WAIT_MS = 3_000;

/**
 * lmdb-js rejects every write of a failed commit with a generic "Commit failed" error whose
 * `commitError` is a second promise rejected with the real cause (an errno or an LMDB code).
 * Awaiting it here also gives that promise a handler, which lmdb-js leaves unhandled
 * (kriszyp/lmdb-js#368). Out of space shows up as ENOSPC, EDQUOT, EFBIG, MDB_MAP_FULL, or as
 * EIO, which LMDB reports for a short write (mdb_page_flush: written < requested).
 */
async function commitFailure(err: unknown): Promise<unknown> {
  if (!isLmdbCommitFailure(err)) return err;
  const cause = await err.commitError.then(
    () => err,
    (c: unknown) => c,
  );
  const code = (cause as { code?: unknown }).code;
  if (typeof code === 'number' && OUT_OF_SPACE.has(code)) {
    return new AppError('storage_full', 'The data store is full; nothing was stored. Free disk space and retry.', { cause });
  }
  return cause instanceof Error ? cause : err;
}

/** errno values (Linux) and the LMDB code that mean "no room for this commit". */
const OUT_OF_SPACE = new Set([
  28, // ENOSPC
  122, // EDQUOT
  27, // EFBIG (file size limit)
  5, // EIO: LMDB's code for a short write, which is how a filling disk usually shows
  -30792, // MDB_MAP_FULL
]);

/**
 * True for lmdb-js's "Commit failed" rejection. Besides the rejections of the writes in a failed
 * commit (which write() turns into errors for its callers), lmdb-js rejects one internal promise
 * per failed batch that nobody can reach; `postrider serve` ignores those at process level
 * instead of crashing (see cli/serve.ts) since every write of the batch reports the failure.
 */
export function isLmdbCommitFailure(err: unknown): err is Error & { commitError: Promise<unknown> } {
  return err instanceof Error && typeof (err as { commitError?: { then?: unknown } }).commitError?.then === 'function';
}
