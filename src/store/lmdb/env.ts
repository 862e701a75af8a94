/**
 * The LMDB environment: the only place in postrider that imports lmdb.
 *
 * Durability: every acknowledged write goes through `write()`, which runs the callback as an
 * LMDB child transaction inside lmdb-js's current write batch and then waits for that batch to
 * be flushed (fsync) to disk. All writes queued in one event-loop turn share one commit and one
 * flush, which is the group commit DESIGN.md asks for: many concurrent requests, one sync.
 * A callback that throws rolls back its own writes (child transaction) and rejects. The writes
 * waiting for one commit run as one group (write-batch.ts), which writes the counters and the
 * event log's meta they all move once.
 */
import fs from 'node:fs';
import path from 'node:path';
import { asBinary, open, type Database, type DatabaseOptions, type RootDatabase, type Transaction } from 'lmdb';
import { settledWithin } from '../../domain/settle.js';
import { claimBackupFolder, removeKilledBackups } from './backup-leftovers.js';
import { CommitFailures, isLmdbCommitFailure } from './commit-failure.js';
import { damaged, inspectDataFile, type DataFileInfo } from './data-file.js';
import { DB_NAMES, SCHEMA_VERSION, type DbName } from './layout.js';
import { examineDataFolder, markerDate, writeMarker } from './marker.js';
import { OutboxSignal } from './outbox-signal.js';
import { withPermission } from './permission.js';
import { ReadCaches } from './read-caches.js';
import { RESTORE_HINT, StoreProblem } from '../port/problems.js';
import { WriteGroup } from './write-batch.js';
import { WriteScope } from './write-scope.js';

/**
 * Values are written as plain MessagePack maps (msgpackr useRecords: false). lmdb-js keeps no
 * shared structures for these databases, so with msgpackr's default records every value carried
 * its own record definition, and every read parsed it and built a new record reader for it:
 * about a fifth of the main thread's time per delivered message (bench delivery, CPU profile).
 * Values written as records before this still read the same (msgpackr reads inline record
 * definitions whatever the option; the test "reads values written as records" checks it), and
 * msgpackr reads maps as plain objects with this option, as records were. No value holds a Map.
 * lmdb-js hands these msgpackr options to msgpackr, though its typings omit them.
 */
const DB_OPTIONS: DatabaseOptions & { useRecords: boolean } = { useRecords: false };

export interface StoreOptions {
  dataDir: string;
  /** Read-only opening, for inspection commands; the daemon and the CLI may also share one
   *  environment read-write, since LMDB is safe across processes. */
  readOnly?: boolean;
  /** Refuse (StoreProblem no_store) instead of creating a store in a folder that holds none:
   *  every CLI command but `serve`, so a wrong --config or folder never leaves an empty store
   *  behind and a command never answers "no keys" from a store that is not the daemon's. */
  mustExist?: boolean;
}

export type Dbs = Record<DbName, Database<any, any>>;

/** For the process-level guard (cli/exit-guard.ts), which reaches the engine through this file only. */
export { isLmdbCommitFailure };

/**
 * A value whose bytes are already encoded as the database stores them (a MessagePack bin made by
 * bytes-in-turns.ts encodedInTurns): put writes them as they are, without msgpackr's copy.
 */
export type Encoded = ReturnType<typeof asBinary>;

export function encodedValue(bytes: Uint8Array): Encoded {
  return asBinary(bytes);
}

export class Store {
  private rootDb: RootDatabase<any, any> | null = null;
  private dbsOpen: Dbs | null = null;
  private cachesOpen: ReadCaches | null = null;
  /** False from stop() on: new writes are refused while the ones in flight finish. */
  private accepting = false;
  private stopping: Promise<void> | null = null;
  private readonly pending = new Set<Promise<unknown>>();
  private scope: WriteScope | null = null;
  /** The writes waiting for lmdb-js to run the next group commit's callbacks (write-batch.ts). */
  private group: WriteGroup | null = null;
  /** The error each write of a failed commit gets (storage_full for lack of room). */
  private readonly failures: CommitFailures;

  /** Notified by the outbox writer (store/webhook-outbox.ts) inside the writing transaction;
   *  the webhook dispatcher of this store subscribes to it. */
  readonly outbox = new OutboxSignal();

  constructor(private readonly opts: StoreOptions) {
    this.failures = new CommitFailures(this.file);
  }

  get path(): string {
    return path.join(this.opts.dataDir, 'db');
  }

  /**
   * Opens the store after checking the data folder (store/marker.ts) and the data file
   * (store/data-file.ts), then reads every database's root once: a missing, emptied, truncated
   * or damaged store is refused with a StoreProblem instead of starting afresh or crashing.
   */
  async start(): Promise<void> {
    const folder = withPermission(() => examineDataFolder(this.opts.dataDir, this.path));
    if (!folder.file && this.opts.readOnly) throw new StoreProblem('store_missing', `there is no store in ${this.path} yet (postrider serve creates it)`);
    if (!folder.file && this.opts.mustExist) throw new StoreProblem('no_store', `there is no postrider store in ${this.opts.dataDir} (postrider serve creates it at its first start)`);
    withPermission(() => fs.mkdirSync(this.path, { recursive: true, mode: 0o700 }));
    let root: RootDatabase<any, any>;
    try {
      // overlappingSync off: a commit resolves once LMDB's own commit has synced it (RFC 5321
      // §6.1: the 250 means the message is on disk). With lmdb-js's overlapping sync the flush
      // is a second promise that belongs to whichever batch is filling when it is asked for; a
      // write queued while a failing batch (full disk) runs gets that batch's flush promise,
      // which is never settled, and its request hangs although its own commit succeeded.
      // noReadAhead (MDB_NORDAHEAD, madvise MADV_RANDOM on the map): a page fault reads that
      // page, not the device's read-ahead window around it (8 MB on some virtual disks). Store
      // reads are random B-tree lookups; with read-ahead each one read megabytes, and under a
      // memory limit smaller than the file those evicted the pages still needed
      // (bench/queue-scale.mjs: 17 major faults, 136 MB read per delivered message in 300 MB).
      // lmdb-js reads noReadAhead but its typings omit it: a variable, not a literal, passes it.
      const options = { path: this.path, maxDbs: 64, overlappingSync: false, noReadAhead: true, readOnly: this.opts.readOnly ?? false };
      root = withPermission(() => open(options));
    } catch (err) {
      throw asDamaged(this.file, err);
    }
    const dbs = {} as Dbs;
    try {
      // Read-only, a database that an older postrider did not create yet is absent (undefined).
      for (const name of DB_NAMES) dbs[name] = root.openDB(name, DB_OPTIONS);
      checkEnvInfo(root, this.file);
      readEdges(dbs);
    } catch (err) {
      await settledWithin(root.close(), STOP_WAIT_MS);
      throw asDamaged(this.file, err);
    }
    if (!dbs.meta) await this.refuseForeign(root);
    this.rootDb = root;
    this.dbsOpen = dbs;
    this.cachesOpen = new ReadCaches();
    this.accepting = true;
    const version = dbs.meta.get('schemaVersion') as number | undefined;
    if (version !== undefined && version > SCHEMA_VERSION) {
      await this.stop();
      throw new Error(`data folder was written by a newer postrider (schema ${version} > ${SCHEMA_VERSION})`);
    }
    if (version === undefined && folder.marked) {
      // A new, empty LMDB file where the folder's store used to be (deleted, then recreated).
      await this.stop();
      throw new StoreProblem('store_missing', `${this.file} holds a new, empty store, but the data folder has held one since ${markerDate(this.opts.dataDir)}. Stop here and ${RESTORE_HINT}.`);
    }
    if (this.opts.readOnly) return;
    // A new store's statistics rollup holds every counter from its first one on (stats-rollup.ts).
    if (version === undefined) {
      await this.write(() => {
        dbs.meta.put('schemaVersion', SCHEMA_VERSION);
        dbs.meta.put('statsRollupBuilt', true);
      });
    }
    // After the first commit: from now on a missing data.mdb is a loss, not a first start.
    if (!folder.marked) writeMarker(this.opts.dataDir);
  }

  /**
   * Only read-only can a database be absent: a read-write open creates every one. An LMDB file
   * without postrider's own databases was written by something else (postrider creates them all
   * at its first start, before its first commit).
   */
  private async refuseForeign(root: RootDatabase<any, any>): Promise<never> {
    await settledWithin(root.close(), STOP_WAIT_MS);
    throw new StoreProblem('no_store', `${this.file} is an LMDB file without postrider's databases: there is no postrider store in ${this.opts.dataDir}`);
  }

  /**
   * New writes are refused at once; writes in flight finish first (lmdb-js runs their callbacks
   * on this thread, and a process that exits while lmdb-js's write thread waits for them never
   * ends: see cli/exit-guard.ts), then the environment is closed.
   */
  stop(): Promise<void> {
    this.accepting = false;
    this.stopping ??= this.close();
    return this.stopping;
  }

  private async close(): Promise<void> {
    const root = this.rootDb;
    if (root) {
      await settledWithin(Promise.allSettled(this.pending), STOP_WAIT_MS);
      // After a failed commit (full disk) lmdb-js resolves close() only after the next
      // successful commit, which may never come. Every acknowledged write was flushed by
      // write() already, so the wait is bounded rather than hanging the shutdown.
      await settledWithin(root.close(), STOP_WAIT_MS);
    }
    this.rootDb = null;
    this.dbsOpen = null;
    this.stopping = null;
  }

  /** Writes started and not yet committed and flushed (or failed): 0 once stop() has drained them. */
  get writesInFlight(): number {
    return this.pending.size;
  }

  /**
   * A cheap real read (the first and last entry of every database, so each root page) for
   * readiness: false when the store is closed or a read fails, as it does on a damaged file.
   */
  healthy(): boolean {
    if (!this.dbsOpen || !this.accepting) return false;
    try {
      readEdges(this.dbsOpen);
      return true;
    } catch {
      return false;
    }
  }

  /**
   * A consistent copy of the store as it is now, taken in one read transaction
   * (mdb_env_copy2), safe while the daemon writes. Writes `dir`/data.mdb; `dir` may exist but
   * must not hold a data.mdb. Compacting leaves free pages out (slower, smaller).
   *
   * The copy is written in a private folder `dir`/incomplete-backup-* and becomes data.mdb only
   * once it is whole and its meta pages check (what the check read is returned with it): a copy that fails (a full disk) or is
   * interrupted never leaves a data.mdb that looks like a backup; a killed one leaves that folder,
   * which the next backup into `dir` removes (backup-leftovers.ts) and names in `removed`.
   *
   * `progress`: told every `everyMs` how many bytes of the copy are written, and how many the
   * store has in use (the copy's size at most: compacting leaves free pages out). LMDB copies in
   * a thread of its own, so the copy's file can be watched meanwhile.
   */
  async backup(dir: string, compact = false, progress?: { report: (written: number, inUse: number) => void; everyMs: number }): Promise<{ file: string; info: DataFileInfo; removed: string[] }> {
    const copy = path.join(dir, 'data.mdb');
    let removed: string[] = [];
    let partial: string | null = null;
    let watch: NodeJS.Timeout | undefined;
    let info: DataFileInfo;
    try {
      fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
      removed = removeKilledBackups(dir);
      partial = claimBackupFolder(dir);
      const written = path.join(partial, 'data.mdb');
      if (progress) watch = watchGrowth(written, inUseBytes(this.file), progress);
      await this.root().backup(partial, compact);
      // LMDB creates it 0666 less the umask.
      fs.chmodSync(written, 0o600);
      info = inspectDataFile(written);
      fs.linkSync(written, copy); // EEXIST rather than replace a data.mdb put there meanwhile
    } catch (err) {
      throw new Error(`the backup to ${dir} failed, ${copy} was not written: ${(err as Error).message}`, { cause: err });
    } finally {
      clearInterval(watch);
      if (partial) fs.rmSync(partial, { recursive: true, force: true });
    }
    return { file: copy, info, removed };
  }

  get isOpen(): boolean {
    return this.rootDb !== null && this.accepting;
  }

  /** The LMDB data file. */
  get file(): string {
    return path.join(this.path, 'data.mdb');
  }

  /** The databases, for the verbs of src/store/ only: reached through dbsOf (databases.ts). */
  private databases(): Dbs {
    if (!this.dbsOpen) throw new Error('store is not open');
    return this.dbsOpen;
  }

  /** The caches of decoded records, made with the databases: reached through cachesOf (databases.ts). */
  private readCaches(): ReadCaches {
    if (!this.cachesOpen) throw new Error('store is not open');
    return this.cachesOpen;
  }

  /**
   * Atomic and durable: resolves once the writes made by fn are committed and synced.
   * A commit that fails for lack of space (full disk, file size limit) rejects with
   * storage_full: nothing of fn was written, and the next write may succeed once space returns.
   */
  async write<T>(fn: () => T): Promise<T> {
    const root = this.root();
    const done = this.commit(root, fn);
    const forget = () => this.pending.delete(done);
    this.pending.add(done);
    done.then(forget, forget);
    return done;
  }

  private async commit<T>(root: RootDatabase<any, any>, fn: () => T): Promise<T> {
    try {
      // A write started inside another write's callback runs nested at once (lmdb-js child
      // transaction); the others join the group of the next commit (write-batch.ts). Without
      // overlapping sync (see start()), the group's promise resolves after the batch holding it
      // was committed and synced, and rejects if that batch failed.
      if (this.scope) return (await root.childTransaction(() => this.nested(fn) as any)) as T;
      this.group ??= new WriteGroup(root, (scope, step) => this.inScope(scope, step), () => (this.group = null));
      return await this.group.add(fn);
    } catch (err) {
      // errorFor counts a failed commit's write at once (CommitFailures.count).
      throw await this.failures.errorFor(err);
    }
  }

  /** Commits that failed as a whole (a full disk) since the store opened: caches of what writes read start afresh. */
  get failedCommits(): number {
    return this.failures.count;
  }

  /**
   * The deferred work of the write whose callback is running now (store/write-scope.ts); null
   * outside one. Callbacks run one at a time on this thread (a nested one: see nested).
   */
  get writeScope(): WriteScope | null {
    return this.scope;
  }

  /** The running write's scope, for the verbs that must run inside write() (the *InTxn functions). */
  requireWriteScope(): WriteScope {
    const scope = this.writeScope;
    if (!scope) throw new Error('a store verb that must run inside Store.write() ran outside one');
    return scope;
  }

  /** step with `scope` as the running write's scope. */
  private inScope<T>(scope: WriteScope, step: () => T): T {
    const outer = this.scope;
    this.scope = scope;
    try {
      return step();
    } finally {
      this.scope = outer;
    }
  }

  /**
   * A write inside a running write's callback: its scope is a child of the running one, so it
   * reads the deferred values (the event log's seq) and hands its own back when it ends well.
   */
  private nested<T>(fn: () => T): T {
    const outer = this.scope;
    const scope = new WriteScope(outer);
    try {
      return this.inScope(scope, () => {
        const result = scope.settled(fn());
        scope.finish();
        return result;
      });
    } catch (err) {
      outer?.nestedFailed(err);
      throw err;
    }
  }

  /**
   * `fn` with one read transaction (one snapshot) held across event-loop turns, for a read that
   * copies a large value a part per turn (bytes-in-turns.ts bytesInTurns). Counted with the writes in
   * flight, so stop() waits for it before it closes the environment: a view into the map must
   * not outlive it. LMDB keeps the snapshot's pages from reuse while it is held (no copy).
   */
  async holdingRead<T>(fn: (txn: Transaction) => Promise<T>): Promise<T> {
    const txn = this.root().useReadTransaction();
    const done = (async () => {
      try {
        return await fn(txn);
      } finally {
        txn.done();
      }
    })();
    const forget = () => this.pending.delete(done);
    this.pending.add(done);
    done.then(forget, forget);
    return done;
  }

  /** Bytes used by the environment's data file (for metrics and the disk-full checks). */
  sizeBytes(): number {
    try {
      return fs.statSync(this.file).size;
    } catch {
      return 0;
    }
  }

  private root(): RootDatabase<any, any> {
    if (!this.rootDb || !this.accepting) throw new Error('store is not open');
    return this.rootDb;
  }
}

const STOP_WAIT_MS = 3_000;

/**
 * Reads the first and the last key of every database: each read walks from the database's root
 * to a leaf, so a damaged root or edge page shows up as an LMDB error (MDB_CORRUPTED,
 * MDB_PAGE_NOTFOUND...) here rather than in a request.
 */
function readEdges(dbs: Dbs): void {
  for (const db of Object.values(dbs)) {
    if (!db) continue;
    for (const _ of db.getKeys({ limit: 1 })) break;
    for (const _ of db.getKeys({ limit: 1, reverse: true })) break;
  }
}

/**
 * LMDB's own view of the environment (mdb_env_info) must fit in the file it maps. A file may end
 * before LMDB's last page where every missing page is free (data-file.ts, checked again here in
 * case the file changed since): refusing any short file here refused healthy ones that end in
 * loose pages, which data-file.ts lets through.
 */
function checkEnvInfo(root: RootDatabase<any, any>, file: string): void {
  const info = root.getStats() as { lastPageNumber: number; pageSize: number };
  const needed = (info.lastPageNumber + 1) * info.pageSize;
  const size = fs.statSync(file).size;
  if (size >= needed) return;
  const checked = inspectDataFile(file);
  if (info.lastPageNumber > checked.lastPage) throw damaged(file, `LMDB needs ${needed} bytes, the file has ${size} (truncated)`);
}

/** The bytes of a data file's pages in use: up to its last committed page. */
function inUseBytes(file: string): number {
  const { lastPage, pageSize } = inspectDataFile(file);
  return (lastPage + 1) * pageSize;
}

/** Reports a growing file's size every `everyMs` (not before it exists); the timer does not hold the process. */
function watchGrowth(file: string, inUse: number, o: { report: (written: number, inUse: number) => void; everyMs: number }): NodeJS.Timeout {
  const timer = setInterval(() => {
    const size = fs.statSync(file, { throwIfNoEntry: false })?.size;
    if (size !== undefined) o.report(size, inUse);
  }, o.everyMs);
  timer.unref();
  return timer;
}

/** LMDB's own error codes (MDB_CORRUPTED, MDB_INVALID...) are negative; errno values are not. */
function asDamaged(file: string, err: unknown): unknown {
  if (err instanceof StoreProblem) return err;
  const code = (err as { code?: unknown }).code;
  return typeof code === 'number' && code < 0 ? damaged(file, (err as Error).message) : err;
}
