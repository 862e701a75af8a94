/**
 * LMDB's free DB (FREE_DBI), read with plain file reads before lmdb-js maps the file: which
 * pages the newest snapshot lists as free. data-file.ts needs it to tell a file whose missing
 * tail pages are all free (LMDB never wrote them: mdb.c's MDB_meta says of mm_last_pg "the
 * file may be shorter if the freeDB lists the final pages") from a cut file.
 *
 * Layout, from node_modules/lmdb/dependencies/lmdb/libraries/liblmdb/mdb.c of lmdb 3.5.6 (the
 * LMDB "master3" line, little-endian, 64-bit pgno_t):
 * - page header (MDB_page_header, PAGEHDRSZ 24): mp_pgno u64 at 0, mp_txnid u64 at 8, mp_pad
 *   u16 at 16, mp_flags u16 at 18, then mp_lower/mp_upper u16 at 20/22 or, on an overflow page,
 *   mp_pages u32 at 20. P_BRANCH 0x01, P_LEAF 0x02, P_OVERFLOW 0x04, P_META 0x08, P_LEAF2 0x20,
 *   P_SUBP 0x40.
 * - mp_ptrs[] u16 from byte 24; PAGEBASE is PAGEHDRSZ in this fork, so NUMKEYS = mp_lower >> 1
 *   and node i starts at mp_ptrs[i] + 24 (NODEPTR).
 * - MDB_node: mn_lo, mn_hi, mn_flags, mn_ksize (u16 each), key and data from byte 8. A branch
 *   node's child is mn_lo | mn_hi << 16 | mn_flags << 32 (NODEPGNO); a leaf node's data size is
 *   mn_lo | mn_hi << 16 (NODEDSZ). F_BIGDATA 0x01: the data is an MDB_ovpage {op_pgno, op_txnid,
 *   op_pages} (24 bytes; stock LMDB keeps only the pgno) and the value starts 24 bytes into page
 *   op_pgno (METADATA).
 * - a free DB value is a count n (u64) and n entries (u64; mdb_freelist_save). lmdb-js does not
 *   keep stock LMDB's sorted page list there: an entry is 0 (an emptied slot), a page number,
 *   or a negative block length -k followed by the block's first page p, for pages p..p+k-1
 *   (mdb_midl_insert and the best-fit branch of mdb_page_alloc, which takes pages from a
 *   block's start). mdb_env_copyfd1 (the compacting copy) counts free pages the same way.
 *
 * A damaged file must give a reason, never a hang or a crash: every page number is checked to
 * lie inside the file before it is read, no page is read twice (a cycle, or two nodes naming
 * one page, is refused, so the walk reads at most the file once), the depth is capped at LMDB's
 * CURSOR_STACK (32), and every offset and count is checked against its page or value.
 */
import fs from 'node:fs';

const HDR = 24;
const P_BRANCH = 0x01;
const P_LEAF = 0x02;
const P_OVERFLOW = 0x04;
const PAGE_TYPES = 0x01 | 0x02 | 0x04 | 0x08 | 0x20 | 0x40;
const F_BIGDATA = 0x01;
const NODE_HDR = 8;
const OVPAGE_BYTES = 24;
/** mdb.c CURSOR_STACK: LMDB cannot descend deeper. */
const MAX_DEPTH = 32;

/** A reason the free DB cannot be read; data-file.ts turns it into store_damaged. */
export class FreeDbDamage extends Error {}

export interface FreeDbWalk {
  /** Free page ranges [first, last], in the order the free DB lists them. */
  ranges: [bigint, bigint][];
  /** The free DB's own pages, as mdb_stat counts them (LMDB's getStats().free). */
  records: number;
  branchPages: number;
  leafPages: number;
  overflowPages: number;
  depth: number;
}

/** A file of pages: reads page runs by number, refusing any that lie past `present`. */
export interface PageFile {
  fd: number;
  pageSize: number;
  /** Whole pages in the file. */
  present: bigint;
}

/** Every record of the free DB rooted at `root` (a page number inside the file). */
export function walkFreeDb(file: PageFile, root: bigint): FreeDbWalk {
  const walk: FreeDbWalk = { ranges: [], records: 0, branchPages: 0, leafPages: 0, overflowPages: 0, depth: 0 };
  const seen = new Set<bigint>();
  const stack: [bigint, number][] = [[root, 1]];
  while (stack.length > 0) {
    const [pgno, depth] = stack.pop()!;
    if (depth > MAX_DEPTH) throw new FreeDbDamage(`it is deeper than ${MAX_DEPTH} levels (a loop?)`);
    walk.depth = Math.max(walk.depth, depth);
    const page = readPages(file, seen, pgno, 1n);
    const type = page.readUInt16LE(18) & PAGE_TYPES;
    if (type === P_BRANCH) {
      walk.branchPages++;
      // Pushed in reverse, so the leaves are read in key order (first record first).
      const children = nodesOf(page, pgno).map((at) => branchChild(page, at));
      for (let i = children.length - 1; i >= 0; i--) stack.push([children[i]!, depth + 1]);
    } else if (type === P_LEAF) {
      walk.leafPages++;
      for (const at of nodesOf(page, pgno)) readRecord(file, seen, walk, page, at);
    } else {
      throw new FreeDbDamage(`page ${pgno} is not a branch or leaf page (flags 0x${page.readUInt16LE(18).toString(16)})`);
    }
  }
  return walk;
}

/** Reads `count` pages from `pgno` on, each only once and only inside the file. */
function readPages(file: PageFile, seen: Set<bigint>, pgno: bigint, count: bigint): Buffer {
  if (pgno < 2n || pgno + count > file.present) throw new FreeDbDamage(`it names page ${pgno}${count > 1n ? ` (${count} pages)` : ''}, which lies outside the file`);
  for (let p = pgno; p < pgno + count; p++) {
    if (seen.has(p)) throw new FreeDbDamage(`page ${p} is reached twice (a loop?)`);
    seen.add(p);
  }
  const bytes = Number(count) * file.pageSize;
  const buf = Buffer.alloc(bytes);
  if (fs.readSync(file.fd, buf, 0, bytes, Number(pgno) * file.pageSize) < bytes) throw new FreeDbDamage(`page ${pgno} cannot be read`);
  // mp_pgno: a page that does not carry its own number is not the page the tree points to.
  if (buf.readBigUInt64LE(0) !== pgno) throw new FreeDbDamage(`page ${pgno} carries the number ${buf.readBigUInt64LE(0)}`);
  return buf;
}

/** Byte offsets of a branch or leaf page's nodes, each with its 8-byte header inside the page. */
function nodesOf(page: Buffer, pgno: bigint): number[] {
  const lower = page.readUInt16LE(20);
  if (lower % 2 !== 0 || HDR + lower > page.length) throw new FreeDbDamage(`page ${pgno} has an impossible node count`);
  const nodes: number[] = [];
  for (let i = 0; i < lower / 2; i++) {
    const at = HDR + page.readUInt16LE(HDR + 2 * i);
    if (at < HDR + lower || at + NODE_HDR > page.length) throw new FreeDbDamage(`page ${pgno} has a node outside the page`);
    nodes.push(at);
  }
  return nodes;
}

function branchChild(page: Buffer, at: number): bigint {
  return BigInt(page.readUInt16LE(at)) | (BigInt(page.readUInt16LE(at + 2)) << 16n) | (BigInt(page.readUInt16LE(at + 4)) << 32n);
}

/** One record: its value, inline or on overflow pages, holds a list of free pages. */
function readRecord(file: PageFile, seen: Set<bigint>, walk: FreeDbWalk, page: Buffer, at: number): void {
  const pgno = page.readBigUInt64LE(0);
  const size = page.readUInt16LE(at) | (page.readUInt16LE(at + 2) << 16);
  const flags = page.readUInt16LE(at + 4);
  const data = at + NODE_HDR + page.readUInt16LE(at + 6);
  walk.records++;
  if (flags & ~F_BIGDATA) throw new FreeDbDamage(`page ${pgno} holds a record with node flags 0x${flags.toString(16)}, which the free DB never has`);
  if (!(flags & F_BIGDATA)) {
    if (data + size > page.length) throw new FreeDbDamage(`page ${pgno} holds a record that runs past the page`);
    return listFreePages(page.subarray(data, data + size), pgno, walk.ranges);
  }
  if (data + OVPAGE_BYTES > page.length) throw new FreeDbDamage(`page ${pgno} holds an overflow record that runs past the page`);
  const first = page.readBigUInt64LE(data);
  const pages = page.readBigUInt64LE(data + 16);
  // op_pages must hold the value after the overflow page's header (OVPAGES in mdb.c).
  if (pages < 1n || BigInt(HDR + size) > pages * BigInt(file.pageSize)) throw new FreeDbDamage(`page ${pgno} holds an overflow record of ${size} bytes on ${pages} pages`);
  const run = readPages(file, seen, first, pages);
  if (!(run.readUInt16LE(18) & P_OVERFLOW)) throw new FreeDbDamage(`page ${first} is not an overflow page`);
  walk.overflowPages += Number(pages);
  listFreePages(run.subarray(HDR, HDR + size), first, walk.ranges);
}

/**
 * Decodes one value: count n, then n entries (see the top of this file). A block length in the
 * last slot has no first page after it: mdb_freelist_save leaves such a length out of the count
 * ("leave off the last byte"), so none should occur; one that does adds no pages.
 */
function listFreePages(value: Buffer, pgno: bigint, ranges: [bigint, bigint][]): void {
  if (value.length < 8) throw new FreeDbDamage(`page ${pgno} holds a free list of ${value.length} bytes`);
  const n = value.readBigUInt64LE(0);
  if ((n + 1n) * 8n > BigInt(value.length)) throw new FreeDbDamage(`page ${pgno} holds a free list that counts ${n} pages in ${value.length} bytes`);
  for (let i = 1; i <= Number(n); i++) {
    const entry = value.readBigInt64LE(8 * i);
    if (entry > 0n) ranges.push([entry, entry]);
    else if (entry < 0n && i < Number(n)) {
      const start = value.readBigUInt64LE(8 * ++i);
      ranges.push([start, start - entry - 1n]);
    }
  }
}

/** The first page of [from, to] that no range covers, or null (one sort, one pass). */
export function firstNotFree(ranges: [bigint, bigint][], from: bigint, to: bigint): bigint | null {
  const inside = ranges.filter(([a, b]) => b >= from && a <= to).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  let next = from;
  for (const [a, b] of inside) {
    if (a > next) return next;
    if (b + 1n > next) next = b + 1n;
  }
  return next <= to ? next : null;
}
