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
 * mm_last_pg and mm_txnid. test/integration/store-integrity.test.ts reads files lmdb-js wrote,
 * so an lmdb upgrade that moves a field fails there first.
 */
import fs from 'node:fs';
import { RESTORE_HINT, StoreProblem } from '../port/problems.js';

const AT = { flags: 18, magic: 24, version: 28, pageSize: 48, freeRoot: 88, mainRoot: 136, lastPage: 144, txnId: 152 } as const;
const META_BYTES = 160;
const P_META = 0x08;
const MAGIC = 0xbeefc0de;
const DATA_VERSION = 2;
/**
 * Pages at the end that LMDB may have freed unwritten (loose pages; see inspectDataFile). A cut
 * copy or a truncated file is short by far more: by the missing part of its data.
 */
const UNWRITTEN_TAIL_PAGES = 32n;
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
    const sizeBytes = fs.fstatSync(fd).size;
    const first = readMeta(fd, 0, file);
    const second = readMeta(fd, first.pageSize, file);
    if (second.pageSize !== first.pageSize) throw damaged(file, 'the two meta pages disagree on the page size');
    // LMDB uses the meta page with the higher transaction id; the other is the one before.
    const meta = second.txnId > first.txnId ? second : first;
    const needed = (meta.lastPage + 1n) * BigInt(meta.pageSize);
    // LMDB does not write a page it allocated and freed in the same transaction (a loose page, in
    // the free list from that commit on), so a healthy file may end up to a few such pages before
    // its last page (seen: one page short after SIGTERM under load). Pages beyond the end are
    // only refused past UNWRITTEN_TAIL_PAGES, or when a root lies there.
    const present = BigInt(sizeBytes) / BigInt(meta.pageSize);
    if (BigInt(sizeBytes) + UNWRITTEN_TAIL_PAGES * BigInt(meta.pageSize) < needed) {
      throw damaged(file, `it is ${sizeBytes} bytes long, but its last committed page ends at byte ${needed} (truncated)`);
    }
    for (const root of meta.roots) {
      if (root !== NO_PAGE && (root < 2n || root > meta.lastPage || root >= present)) throw damaged(file, `a root page number (${root}) lies outside the file`);
    }
    return { sizeBytes, pageSize: meta.pageSize, lastPage: Number(meta.lastPage), txnId: Number(meta.txnId) };
  } finally {
    fs.closeSync(fd);
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
