/**
 * File-level check of LMDB's data file, before it is mapped into memory. A file shorter than
 * its last committed page turns the first read of a missing page into SIGBUS (the process dies
 * without a line of log), and a damaged meta page sends LMDB to a wild root page. Reading the
 * two meta pages with plain file reads turns both into a message the operator can act on.
 *
 * Layout (the LMDB inside lmdb-js 3, little-endian, 64-bit): each meta page starts with a
 * 24-byte page header (flags at 18, P_META = 0x08), then MDB_meta: mm_magic u32 (0xBEEFC0DE),
 * mm_version u32 (data version 2 in the low 16 bits), mm_address, mm_mapsize, two MDB_db of 48
 * bytes (the free DB, whose md_pad holds the page size, then the main DB; md_root at +40),
 * mm_last_pg and mm_txnid. test/integration/store-integrity.lmdb.test.ts and
 * store-free-pages.lmdb.test.ts read files lmdb-js wrote, so an lmdb upgrade that moves a field
 * or changes the free DB's format (free-pages.ts) fails there first.
 */
import fs from 'node:fs';
import { FreeDbDamage, firstNotFree, walkFreeDb } from './free-pages.js';
import { RESTORE_HINT, StoreProblem } from '../port/problems.js';

const AT = { flags: 18, magic: 24, version: 28, pageSize: 48, freeRoot: 88, mainRoot: 136, lastPage: 144, txnId: 152 } as const;
const META_BYTES = 160;
const P_META = 0x08;
const MAGIC = 0xbeefc0de;
const DATA_VERSION = 2;
/**
 * Walks of the free DB that a commit may overlap before a failing one is believed (see
 * checkTail): the walk reads pages of a live file without a read transaction.
 */
const TAIL_ATTEMPTS = 3;
/** md_root of an empty tree. */
const NO_PAGE = 0xffffffffffffffffn;

export interface DataFileInfo {
  sizeBytes: number;
  pageSize: number;
  /** mm_last_pg of the newest meta page: the file must hold pages 0..lastPage. */
  lastPage: number;
  txnId: number;
}

interface Meta {
  pageSize: number;
  lastPage: bigint;
  txnId: bigint;
  roots: bigint[];
}

/** Checks the meta pages and the file size of a non-empty data.mdb; throws store_damaged. */
export function inspectDataFile(file: string): DataFileInfo {
  const fd = fs.openSync(file, 'r');
  try {
    for (let attempt = 1; ; attempt++) {
      const { meta, sizeBytes } = readState(fd, file);
      const problem = checkTail(fd, meta, sizeBytes);
      // The daemon may commit while the CLI reads (the walk holds no read transaction), and two
      // commits free and reuse the pages of the free DB just walked: a failure counts only if the
      // newest meta page is still the one the walk started from.
      if (problem && (readState(fd, file).meta.txnId === meta.txnId || attempt === TAIL_ATTEMPTS)) throw damaged(file, problem);
      if (problem) continue;
      checkRoots(meta, sizeBytes, file);
      return { sizeBytes, pageSize: meta.pageSize, lastPage: Number(meta.lastPage), txnId: Number(meta.txnId) };
    }
  } finally {
    fs.closeSync(fd);
  }
}

/**
 * The newest meta page (after the checks of both) and the file size, read in that order: LMDB
 * writes a commit's pages before its meta page (mdb.c mdb_txn_commit: mdb_page_flush, then
 * mdb_env_write_meta), so a size read after the meta covers every page that meta names, however
 * the daemon commits meanwhile. Read the other way round, a commit between the two made a live,
 * whole store look cut short ("its last committed page ends at byte …"): a backup under write
 * load was refused so once (test/e2e/store-damage.test.ts).
 */
function readState(fd: number, file: string): { meta: Meta; sizeBytes: number } {
  const first = readMeta(fd, 0, file);
  const second = readMeta(fd, first.pageSize, file);
  const sizeBytes = fs.fstatSync(fd).size;
  if (second.pageSize !== first.pageSize) throw damaged(file, 'the two meta pages disagree on the page size');
  // LMDB uses the meta page with the higher transaction id; the other is the one before.
  const meta = second.txnId > first.txnId ? second : first;
  return { meta, sizeBytes };
}

function checkRoots(meta: Meta, sizeBytes: number, file: string): void {
  const present = BigInt(sizeBytes) / BigInt(meta.pageSize);
  for (const root of meta.roots) {
    if (root !== NO_PAGE && (root < 2n || root > meta.lastPage || root >= present)) throw damaged(file, `a root page number (${root}) lies outside the file`);
  }
}

/**
 * A file may end before mm_last_pg only where the free DB lists every missing page: LMDB does
 * not write a page it allocated and freed in the same transaction (a loose page, in the free DB
 * from that commit on; seen: one page short after SIGTERM under load), and mdb.c's MDB_meta says
 * of mm_last_pg "the file may be shorter if the freeDB lists the final pages". Any other missing
 * page is a cut file. Returns the reason the file is damaged, or null.
 */
function checkTail(fd: number, meta: Meta, sizeBytes: number): string | null {
  const present = BigInt(sizeBytes) / BigInt(meta.pageSize);
  if (present > meta.lastPage) return null;
  const truncated = `it is ${sizeBytes} bytes long, but its last committed page ends at byte ${(meta.lastPage + 1n) * BigInt(meta.pageSize)}`;
  // A root is a page in use: no need to read the free DB (whose root may be the missing page).
  const missingRoot = meta.roots.find((root) => root >= present && root <= meta.lastPage);
  if (missingRoot !== undefined) return `${truncated}, and its missing page ${missingRoot} is a root page (truncated)`;
  const freeRoot = meta.roots[0]!;
  try {
    const ranges = freeRoot === NO_PAGE ? [] : walkFreeDb({ fd, pageSize: meta.pageSize, present }, freeRoot).ranges;
    const missing = firstNotFree(ranges, present, meta.lastPage);
    return missing === null ? null : `${truncated}, and its missing page ${missing} is not a free page (truncated)`;
  } catch (err) {
    if (!(err instanceof FreeDbDamage)) throw err;
    return `${truncated}, and its list of free pages, which must name every missing page, is damaged: ${err.message}`;
  }
}

function readMeta(fd: number, offset: number, file: string): Meta {
  const which = offset === 0 ? 'first' : 'second';
  const buf = Buffer.alloc(META_BYTES);
  if (fs.readSync(fd, buf, 0, META_BYTES, offset) < META_BYTES) throw damaged(file, `it is too short to hold its ${which} meta page`);
  if (!(buf.readUInt16LE(AT.flags) & P_META) || buf.readUInt32LE(AT.magic) !== MAGIC) {
    throw damaged(file, `its ${which} meta page is not an LMDB meta page`);
  }
  const version = buf.readUInt32LE(AT.version) & 0xffff;
  if (version !== DATA_VERSION) throw damaged(file, `its ${which} meta page has data format ${version}, expected ${DATA_VERSION}`);
  const pageSize = buf.readUInt32LE(AT.pageSize);
  if (pageSize < 512 || pageSize > 65536 || (pageSize & (pageSize - 1)) !== 0) {
    throw damaged(file, `its ${which} meta page gives an impossible page size (${pageSize})`);
  }
  return {
    pageSize,
    lastPage: buf.readBigUInt64LE(AT.lastPage),
    txnId: buf.readBigUInt64LE(AT.txnId),
    roots: [buf.readBigUInt64LE(AT.freeRoot), buf.readBigUInt64LE(AT.mainRoot)],
  };
}

/** The one message for a damaged file: what, where, what to do. */
export function damaged(file: string, reason: string): StoreProblem {
  return new StoreProblem('store_damaged', `the store ${file} is damaged: ${reason}. Stop postrider and ${RESTORE_HINT}; keep the damaged file for inspection.`);
}
