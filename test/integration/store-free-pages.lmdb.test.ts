/**
 * A test of the LMDB engine itself (src/store/lmdb/), on real files lmdb-js wrote in a temp
 * folder (raw access to lmdb allowed, as in every *.lmdb.test.ts): the free DB reader
 * (free-pages.ts) and the exact rule of data-file.ts for a file that ends before its last
 * committed page: every missing page must be a free page.
 *
 * The fixture makes the free DB non-trivial: a read transaction held open over 200 commits keeps
 * LMDB from reusing what they free, so each leaves its own record (several leaf pages and a
 * branch page); then one commit deletes a whole database, whose list of freed pages (a plain
 * page list, mt_free_pgs) is too long for a node and sits on overflow pages.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { open } from 'lmdb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inspectDataFile } from '../../src/store/lmdb/data-file.js';
import { LmdbStore } from '../../src/store/lmdb/engine.js';
import { walkFreeDb, type FreeDbWalk } from '../../src/store/lmdb/free-pages.js';
import { StoreProblem } from '../../src/store/port/problems.js';

const DBS = ['a', 'b', 'c'] as const;
const AT = { freeRoot: 88, lastPage: 144, txnId: 152 };

let root: string;
/** The store just before the deletion of b: its last page is one of b's pages, in use. */
let before: string;
/** The store after it: b's pages, at the end of the file, are free. */
let after: string;

beforeAll(async () => {
  root = fs.mkdtempSync(path.join(os.tmpdir(), 'postrider-freepages-'));
  before = path.join(root, 'before');
  after = path.join(root, 'after');
  const dir = path.join(root, 'live');
  // The store's own options (store/lmdb/env.ts) but noSync: the same file, written faster.
  const env = open({ path: dir, maxDbs: 8, overlappingSync: false, noSync: true });
  const [a, , c] = DBS.map((name) => env.openDB({ name }));
  env.transactionSync(() => {
    for (let i = 0; i < 3000; i++) a!.putSync(i, `${'a'.repeat(300)}${i}`);
  });
  // An open range iterator holds its read transaction (a snapshot) until it is closed.
  const reader = a!.getRange({ snapshot: true })[Symbol.iterator]();
  reader.next();
  for (let t = 0; t < 200; t++) {
    env.transactionSync(() => {
      for (let i = 0; i < 5; i++) a!.putSync((t * 37 + i * 601) % 3000, `${'A'.repeat(250)}${t}`);
      c!.putSync(t, { t, note: 'x'.repeat(t % 50) });
    });
  }
  reader.return?.();
  // A commit after the reader is gone: it reuses free pages.
  env.transactionSync(() => {
    for (let i = 0; i < 3000; i += 2) a!.removeSync(i);
  });
  await env.close();
  copyStore(dir, before);
  // b's pages come last in the file; deleting b in one commit frees them all, and the list of
  // the pages it frees is long enough for overflow pages.
  const env2 = open({ path: dir, maxDbs: 8, overlappingSync: false, noSync: true });
  const b2 = env2.openDB({ name: 'b' });
  env2.transactionSync(() => {
    for (let i = 0; i < 40000; i++) b2.putSync(i, `${'b'.repeat(200)}${i}`);
  });
  env2.transactionSync(() => {
    for (let i = 0; i < 40000; i++) b2.removeSync(i);
  });
  await env2.close();
  copyStore(dir, after);
}, 60_000);

afterAll(() => {
  fs.rmSync(root, { recursive: true, force: true });
});

function copyStore(from: string, to: string): void {
  fs.mkdirSync(to, { recursive: true });
  fs.copyFileSync(path.join(from, 'data.mdb'), path.join(to, 'data.mdb'));
}

/** A fresh copy of one of the fixture's stores, to cut or damage. */
function scratch(from: string): string {
  const to = fs.mkdtempSync(path.join(root, 'scratch-'));
  copyStore(from, to);
  return path.join(to, 'data.mdb');
}

interface Meta { pageSize: number; lastPage: bigint; freeRoot: bigint; metaOffset: number }

function newestMeta(file: string): Meta {
  const buf = fs.readFileSync(file);
  const pageSize = buf.readUInt32LE(48);
  const offset = buf.readBigUInt64LE(pageSize + AT.txnId) > buf.readBigUInt64LE(AT.txnId) ? pageSize : 0;
  return { pageSize, lastPage: buf.readBigUInt64LE(offset + AT.lastPage), freeRoot: buf.readBigUInt64LE(offset + AT.freeRoot), metaOffset: offset };
}

function walk(file: string): FreeDbWalk {
  const meta = newestMeta(file);
  const fd = fs.openSync(file, 'r');
  try {
    return walkFreeDb({ fd, pageSize: meta.pageSize, present: BigInt(fs.fstatSync(fd).size) / BigInt(meta.pageSize) }, meta.freeRoot);
  } finally {
    fs.closeSync(fd);
  }
}

function freeSet(w: FreeDbWalk): Set<bigint> {
  const free = new Set<bigint>();
  for (const [first, last] of w.ranges) for (let p = first; p <= last; p++) free.add(p);
  return free;
}

/** The highest page number that the free DB does not list: in use (or a leak). */
function highestUsed(file: string): bigint {
  const free = freeSet(walk(file));
  let page = newestMeta(file).lastPage;
  while (free.has(page)) page--;
  return page;
}

function cut(file: string, pages: bigint): void {
  fs.truncateSync(file, Number(pages) * newestMeta(file).pageSize);
}

function damage(file: string): StoreProblem {
  try {
    inspectDataFile(file);
  } catch (err) {
    expect(err).toBeInstanceOf(StoreProblem);
    expect((err as StoreProblem).code).toBe('store_damaged');
    return err as StoreProblem;
  }
  throw new Error(`${file} passed`);
}

/** The check before this change (commit 83c25743): up to 32 missing pages, roots inside. */
function passedTheOldCheck(file: string): boolean {
  const buf = fs.readFileSync(file);
  const meta = newestMeta(file);
  const present = BigInt(buf.length) / BigInt(meta.pageSize);
  const roots = [meta.freeRoot, buf.readBigUInt64LE(meta.metaOffset + 136)];
  return BigInt(buf.length) + 32n * BigInt(meta.pageSize) >= (meta.lastPage + 1n) * BigInt(meta.pageSize) && roots.every((r) => r < present);
}

/**
 * Opens the store in a child process (a read of a missing page is SIGBUS, which would kill the
 * test runner), reads every record of every database, writes one more, and prints a digest of
 * what it read.
 */
function readInChild(dir: string): { status: number | null; signal: string | null; out: string; err: string } {
  const script = `
    import { open } from 'lmdb';
    import { createHash } from 'node:crypto';
    const env = open({ path: ${JSON.stringify(dir)}, maxDbs: 8, overlappingSync: false });
    const out = {};
    for (const name of ${JSON.stringify(DBS)}) {
      const hash = createHash('sha256');
      let n = 0;
      for (const { key, value } of env.openDB(name).getRange()) { hash.update(JSON.stringify([key, value])); n++; }
      out[name] = n + ':' + hash.digest('hex');
    }
    await env.openDB('a').put('after', 'written');
    if (env.openDB('a').get('after') !== 'written') throw new Error('write lost');
    await env.close();
    process.stdout.write(JSON.stringify(out));`;
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], { cwd: process.cwd(), encoding: 'utf8', timeout: 20_000 });
  return { status: r.status, signal: r.signal, out: r.stdout, err: r.stderr };
}

describe('the free DB reader', () => {
  it('reads a free DB of several pages and one on overflow pages as LMDB counts it', async () => {
    const walks: FreeDbWalk[] = [];
    for (const dir of [before, after]) {
      const w = walk(path.join(dir, 'data.mdb'));
      const env = open({ path: dir, maxDbs: 8, overlappingSync: false, readOnly: true });
      const free = (env.getStats() as { free: Record<string, number> }).free;
      await env.close();
      expect({ records: w.records, branchPages: w.branchPages, leafPages: w.leafPages, overflowPages: w.overflowPages, depth: w.depth }).toEqual({
        records: free.entryCount,
        branchPages: free.treeBranchPageCount,
        leafPages: free.treeLeafPageCount,
        overflowPages: free.overflowPages,
        depth: free.treeDepth,
      });
      walks.push(w);
    }
    expect(walks[0]!.branchPages).toBeGreaterThan(0); // 'before': a branch page over several leaves
    expect(walks[1]!.overflowPages).toBeGreaterThan(1); // 'after': b's freed pages, one record
  });

  it('lists exactly the pages that LMDB\'s compacting copy leaves out', async () => {
    // mdb_env_copyfd1 counts the free pages and the free DB's own pages, sets the copy's last
    // page to the original's minus that count, and fails (MDB_INCOMPATIBLE, "page leak or
    // corrupt DB") unless its walk of every database ends on that page: a copy that succeeds
    // confirms the count independently of free-pages.ts.
    for (const dir of [before, after]) {
      const file = path.join(dir, 'data.mdb');
      const w = walk(file);
      const free = freeSet(w);
      const listed = w.ranges.reduce((n, [first, last]) => n + (last - first + 1n), 0n);
      expect(listed).toBe(BigInt(free.size)); // no page listed twice
      const meta = newestMeta(file);
      expect([...free].every((p) => p >= 2n && p <= meta.lastPage)).toBe(true);
      const copyDir = fs.mkdtempSync(path.join(root, 'compact-'));
      const env = open({ path: dir, maxDbs: 8, overlappingSync: false, readOnly: true });
      await env.backup(copyDir, true);
      await env.close();
      const compacted = newestMeta(path.join(copyDir, 'data.mdb')).lastPage;
      expect(meta.lastPage - compacted).toBe(listed + BigInt(w.branchPages + w.leafPages + w.overflowPages));
    }
  });
});

describe('a data file that ends before its last committed page', () => {
  it('passes when every missing page is free, and lmdb-js reads every record of it back unchanged', () => {
    const file = scratch(after);
    const full = readInChild(path.dirname(scratch(after)));
    expect(full.status, full.err).toBe(0);
    const lastPage = newestMeta(file).lastPage;
    const keep = highestUsed(file) + 1n;
    expect(lastPage - keep).toBeGreaterThan(100n); // b's pages: a long free tail
    cut(file, keep);

    expect(inspectDataFile(file).lastPage).toBe(Number(lastPage));
    const cutRead = readInChild(path.dirname(file));
    expect({ status: cutRead.status, signal: cutRead.signal, err: cutRead.err }).toEqual({ status: 0, signal: null, err: '' });
    expect(JSON.parse(cutRead.out)).toEqual(JSON.parse(full.out));
    expect(() => inspectDataFile(file)).not.toThrow();
  });

  it('passes Store.start as well, which checks LMDB\'s own last page against the file', async () => {
    const dataDir = fs.mkdtempSync(path.join(root, 'store-'));
    const file = path.join(dataDir, 'db', 'data.mdb');
    copyStore(after, path.join(dataDir, 'db'));
    cut(file, highestUsed(file) + 1n);
    // Read-write: the start also writes (schemaVersion, in a store postrider did not create).
    const store = new LmdbStore({ dataDir });
    await store.start();
    await store.stop();

    cut(file, highestUsed(file));
    const err = await new LmdbStore({ dataDir }).start().then(() => null, (e: unknown) => e);
    expect((err as StoreProblem).code).toBe('store_damaged');
  });

  it('is refused when a missing page is in use, which the 32-page allowance let through', () => {
    const file = scratch(before);
    const meta = newestMeta(file);
    expect(fs.statSync(file).size).toBe(Number(meta.lastPage + 1n) * meta.pageSize);
    const used = highestUsed(file);
    expect(meta.lastPage - used).toBeLessThan(31n);
    cut(file, used); // page `used` and the free pages after it are missing

    expect(passedTheOldCheck(file)).toBe(true);
    expect(damage(file).message).toContain(`missing page ${used} is not a free page (truncated)`);
  });

  it('is refused when a page below the free tail is missing', () => {
    const file = scratch(after);
    const used = highestUsed(file);
    cut(file, used);
    expect(damage(file).message).toContain(`missing page ${used} is not a free page (truncated)`);
  });
});

describe('a damaged free DB in a file that ends before its last committed page', () => {
  /** A copy of 'after' cut after its last page in use: it passes until it is damaged. */
  function cutStore(): { file: string; present: bigint; pageSize: number; freeRoot: bigint } {
    const file = scratch(after);
    const present = highestUsed(file) + 1n;
    cut(file, present);
    expect(() => inspectDataFile(file)).not.toThrow();
    const { pageSize, freeRoot } = newestMeta(file);
    return { file, present, pageSize, freeRoot };
  }

  function writePage(file: string, pgno: bigint, fill: (page: Buffer) => void): void {
    const page = Buffer.alloc(newestMeta(file).pageSize);
    page.writeBigUInt64LE(pgno, 0);
    fill(page);
    const fd = fs.openSync(file, 'r+');
    fs.writeSync(fd, page, 0, page.length, Number(pgno) * page.length);
    fs.closeSync(fd);
  }

  /** A page with one node of the given bytes at the end (mp_lower 2, mp_upper its offset). */
  function onePage(flags: number, node: Buffer): (page: Buffer) => void {
    return (page) => {
      const at = page.length - node.length - (node.length % 2);
      page.writeUInt16LE(flags, 18);
      page.writeUInt16LE(2, 20);
      page.writeUInt16LE(at - 24, 22);
      page.writeUInt16LE(at - 24, 24);
      node.copy(page, at);
    };
  }

  const branchTo = (child: bigint) => onePage(0x01, nodeHeader(Number(child & 0xffffn), Number((child >> 16n) & 0xffffn), Number(child >> 32n), 0));
  function leafWith(value: Buffer, flags = 0): (page: Buffer) => void {
    const key = Buffer.alloc(8, 1);
    return onePage(0x02, Buffer.concat([nodeHeader(value.length & 0xffff, value.length >> 16, flags, 8), key, value]));
  }
  function nodeHeader(lo: number, hi: number, flags: number, ksize: number): Buffer {
    const b = Buffer.alloc(8);
    [lo, hi, flags, ksize].forEach((v, i) => b.writeUInt16LE(v, 2 * i));
    return b;
  }
  const u64s = (...values: bigint[]) => Buffer.concat(values.map((v) => { const b = Buffer.alloc(8); b.writeBigInt64LE(v); return b; }));

  it('refuses a free root among the missing pages, or past the last page', () => {
    const setFreeRoot = (file: string, root: bigint) => {
      const fd = fs.openSync(file, 'r+');
      fs.writeSync(fd, u64s(root), 0, 8, newestMeta(file).metaOffset + AT.freeRoot);
      fs.closeSync(fd);
    };
    const missing = cutStore();
    setFreeRoot(missing.file, missing.present + 3n);
    expect(damage(missing.file).message).toContain(`missing page ${missing.present + 3n} is a root page (truncated)`);

    const past = cutStore();
    const beyond = newestMeta(past.file).lastPage + 10n;
    setFreeRoot(past.file, beyond);
    expect(damage(past.file).message).toContain(`it names page ${beyond}, which lies outside the file`);
  });

  it('refuses a branch page that points past the end of the file, to itself, or 40 levels deep', () => {
    const past = cutStore();
    writePage(past.file, past.freeRoot, branchTo(past.present + 2n));
    expect(damage(past.file).message).toContain(`it names page ${past.present + 2n}, which lies outside the file`);

    const self = cutStore();
    writePage(self.file, self.freeRoot, branchTo(self.freeRoot));
    expect(damage(self.file).message).toContain(`page ${self.freeRoot} is reached twice`);

    // A chain through free pages inside the file: each a branch page to the next.
    const deep = cutStore();
    const free = [...freeSet(walk(deep.file))].filter((p) => p < deep.present && p !== deep.freeRoot).slice(0, 40);
    const chain = [deep.freeRoot, ...free];
    chain.slice(0, -1).forEach((p, i) => writePage(deep.file, p, branchTo(chain[i + 1]!)));
    expect(damage(deep.file).message).toContain('deeper than 32 levels');
  });

  it('refuses a free list whose count is larger than its node, inline or on overflow pages', () => {
    const inline = cutStore();
    writePage(inline.file, inline.freeRoot, leafWith(u64s(5n, 7n)));
    expect(damage(inline.file).message).toContain('holds a free list that counts 5 pages in 16 bytes');

    // The real record of b's freed pages, on its overflow pages: one more than it holds.
    const real = cutStore();
    const fd = fs.openSync(real.file, 'r+');
    const root = Buffer.alloc(real.pageSize);
    fs.readSync(fd, root, 0, real.pageSize, Number(real.freeRoot) * real.pageSize);
    const nodes = Array.from({ length: root.readUInt16LE(20) / 2 }, (_, i) => 24 + root.readUInt16LE(24 + 2 * i));
    const big = nodes.find((at) => root.readUInt16LE(at + 4) & 1)!;
    const ovPage = root.readBigUInt64LE(big + 8 + root.readUInt16LE(big + 6));
    const count = Buffer.alloc(8);
    fs.readSync(fd, count, 0, 8, Number(ovPage) * real.pageSize + 24);
    fs.writeSync(fd, u64s(count.readBigInt64LE() + 1n), 0, 8, Number(ovPage) * real.pageSize + 24);
    fs.closeSync(fd);
    expect(damage(real.file).message).toMatch(/holds a free list that counts \d+ pages in \d+ bytes/);
  });

  it('refuses overflow records past the file, pages of the wrong kind, and a page with another number', () => {
    const overflow = cutStore();
    writePage(overflow.file, overflow.freeRoot, leafWith(u64s(overflow.present + 1n, 1n, 1n), 0x01));
    expect(damage(overflow.file).message).toContain(`it names page ${overflow.present + 1n}, which lies outside the file`);

    const kind = cutStore();
    writePage(kind.file, kind.freeRoot, () => undefined);
    expect(damage(kind.file).message).toContain(`page ${kind.freeRoot} is not a branch or leaf page`);

    const moved = cutStore();
    writePage(moved.file, moved.freeRoot, (page) => page.writeBigUInt64LE(moved.freeRoot + 1n, 0));
    expect(damage(moved.file).message).toContain(`page ${moved.freeRoot} carries the number ${moved.freeRoot + 1n}`);

    const dup = cutStore();
    writePage(dup.file, dup.freeRoot, leafWith(u64s(1n, 7n), 0x04));
    expect(damage(dup.file).message).toContain('node flags 0x4');
  });
});
