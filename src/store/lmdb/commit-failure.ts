/**
 * What a failed LMDB commit tells the writes it held: storage_full when the data file had no room
 * (the client may retry once space returns), the cause itself otherwise.
 *
 * lmdb-js rejects every write of a failed commit with a generic "Commit failed" error whose
 * `commitError` is a second promise, rejected with the real cause (an errno or an LMDB code) by
 * the failure's own callback. That callback finds the promise only if the writes were rejected
 * before it ran. Sometimes (about one failed commit in fifty under a file size limit, lmdb-js
 * 3.5.6, when the next batch was queued while the failing one ran) they are rejected later, when
 * that next batch starts its callbacks; the failure's cause is then printed and dropped, and
 * `commitError` waits for the next failed commit's. When the commits after it succeed (space came
 * back, or the writes stopped) it never settles. Awaiting it without a bound left those writes,
 * and the requests behind them, hanging for good (test/e2e/store-full-writes.lmdb.test.ts).
 */
import fs from 'node:fs';
import { settledWithin } from '../../domain/settle.js';
import { storageFullError } from '../../domain/storage-full.js';

/**
 * How long a cause may take to arrive. When lmdb-js rejects the writes in the failure's own
 * callback, the cause is there before the writes' handlers run; when it rejects them while
 * polling between callbacks, the failure's callback follows as soon as the writer thread ends.
 */
const CAUSE_WAIT_MS = 1_000;

/** errno values (Linux) and the LMDB code that mean "no room for this commit". */
const OUT_OF_SPACE = new Set([
  28, // ENOSPC
  122, // EDQUOT
  27, // EFBIG (file size limit)
  5, // EIO: LMDB's code for a short write, which is how a filling disk usually shows
  -30792, // MDB_MAP_FULL
]);

/** Free space below which a commit whose cause was lost is taken to have failed for room. */
const LOW_FREE_BYTES = 256 * 1024 * 1024;

/**
 * True for lmdb-js's "Commit failed" rejection. Besides the rejections of the writes in a failed
 * commit (which write() turns into errors for its callers), lmdb-js rejects one internal promise
 * per failed batch that nobody can reach; `postrider serve` ignores those at process level
 * instead of crashing (cli/exit-guard.ts) since every write of the batch reports the failure.
 */
export function isLmdbCommitFailure(err: unknown): err is Error & { commitError: Promise<unknown> } {
  return err instanceof Error && typeof (err as { commitError?: { then?: unknown } }).commitError?.then === 'function';
}

/** One store's commit failures: the error each write gets, how many, and the last cause that arrived. */
export class CommitFailures {
  private failedWrites = 0;
  /** The cause of the latest failed commit whose cause arrived: what a lost cause most likely was. */
  private lastCause: unknown = null;

  /** `dataFile`: LMDB's data.mdb, whose size and file system the fallback looks at. */
  constructor(
    private readonly dataFile: string,
    private readonly waitMs = CAUSE_WAIT_MS,
  ) {}

  /**
   * The error a write of a failed commit rejects with. Awaiting `commitError` also gives that
   * promise a handler, which lmdb-js leaves unhandled (kriszyp/lmdb-js#368). Out of space shows
   * up as ENOSPC, EDQUOT, EFBIG, MDB_MAP_FULL, or as EIO, which LMDB reports for a short write
   * (mdb_page_flush: written < requested).
   */
  async errorFor(err: unknown): Promise<unknown> {
    if (!isLmdbCommitFailure(err)) return err;
    // Counted before the first await, so at once: see `count`.
    this.failedWrites++;
    let cause: unknown = err;
    const arrived = await settledWithin(
      err.commitError.then(
        () => undefined,
        (c: unknown) => (cause = c),
      ),
      this.waitMs,
    );
    if (arrived) {
      this.lastCause = cause;
      if (outOfSpace(cause)) return storageFullError(cause);
      return cause instanceof Error ? cause : err;
    }
    // The cause was lost (see the top of this file): the last one that arrived, or the disk's state.
    const full = this.lastCause !== null ? outOfSpace(this.lastCause) : this.looksFull();
    return full ? storageFullError(err) : err;
  }

  /**
   * Writes rejected by a failed commit so far. It moves in the turn the rejection arrives, before
   * the next batch's callbacks run: what a callback of the failed batch read (its earlier
   * callbacks' writes) may be gone, and the read caches keyed on it start afresh.
   */
  get count(): number {
    return this.failedWrites;
  }

  /**
   * For a cause lmdb-js lost before any other failure told one: the data file at the process's
   * file size limit (RLIMIT_FSIZE, /proc/self/limits), or its file system nearly full.
   */
  private looksFull(): boolean {
    try {
      const size = fs.statSync(this.dataFile).size;
      const limit = fileSizeLimit();
      if (limit !== null && size + 1024 * 1024 > limit) return true;
      const fsStats = fs.statfsSync(this.dataFile);
      return fsStats.bavail * fsStats.bsize < LOW_FREE_BYTES;
    } catch {
      return false;
    }
  }
}

function outOfSpace(cause: unknown): boolean {
  const code = (cause as { code?: unknown } | null)?.code;
  return typeof code === 'number' && OUT_OF_SPACE.has(code);
}

/** The soft RLIMIT_FSIZE in bytes, null when unlimited or unknown (not Linux). */
function fileSizeLimit(): number | null {
  try {
    const line = /^Max file size\s+(\S+)/m.exec(fs.readFileSync('/proc/self/limits', 'utf8'));
    const soft = line?.[1];
    return soft && /^\d+$/.test(soft) ? Number(soft) : null;
  } catch {
    return null;
  }
}
