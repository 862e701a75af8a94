/**
 * How much RSS one random read of an LMDB file adds, with the file in the page cache and without.
 *
 * Why it matters: LMDB reads through a memory map, and RSS counts every page of the map the
 * process has faulted in. On a read fault of a file mapping Linux also maps the neighbouring pages
 * that are already in the page cache ("fault-around", 64 KiB by default), so a process reading
 * a cached file at random collects far more RSS than it reads. The pages are the page cache's,
 * shared and reclaimable; nothing is allocated for them. This measures that effect on the machine
 * the benchmark runs on, with lmdb-js opened as the daemon opens it (noReadAhead: MADV_RANDOM,
 * which stops readahead from disk but not fault-around).
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { open } from 'lmdb';
import { rssOf } from './memory.mjs';

function rssFileKb() {
  return rssOf(process.pid).file * 1024;
}

/** RssFile KB added per random get, over `reads` gets of a freshly opened map. */
function perRead(dir, keys, reads) {
  const db = open({ path: dir, noReadAhead: true, readOnly: true });
  try {
    const before = rssFileKb();
    for (let i = 0; i < reads; i++) db.get(keys[Math.floor(Math.random() * keys.length)]);
    return (rssFileKb() - before) / reads;
  } finally {
    db.close();
  }
}

/**
 * Writes `records` values of about 2 KB (a message record and body's size) into a scratch LMDB
 * file, then reads `reads` random ones twice: with the file still cached from writing it, and
 * after its pages were dropped from the cache (GNU dd iflag=nocache count=0). Returns KB of
 * RssFile per read for both, and the file's size in MB.
 */
export async function faultAround({ records = 200_000, reads = 1_000 } = {}) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'postrider-fault-around-'));
  try {
    const db = open({ path: dir, noReadAhead: true });
    const keys = Array.from({ length: records }, (_, i) => `m${String(i).padStart(8, '0')}`);
    const value = { body: 'x'.repeat(1_900) };
    for (let i = 0; i < records; i += 5_000) await db.transaction(() => keys.slice(i, i + 5_000).forEach((k) => db.put(k, value)));
    await db.close();
    const file = path.join(dir, 'data.mdb');
    const cached = perRead(dir, keys, reads);
    execFileSync('dd', [`if=${file}`, 'iflag=nocache', 'count=0', 'status=none']);
    const uncached = perRead(dir, keys, reads);
    return { cachedKb: cached, uncachedKb: uncached, fileMb: fs.statSync(file).size / 1e6, reads };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
