/**
 * One daemon per data folder. Two daemons on one folder both lease the same queue and stall
 * each other's acknowledged messages, so `postrider serve` takes `daemon.lock` in the data
 * folder before it opens the store, and a second one exits naming the first. CLI commands do
 * not take it: LMDB is safe across processes, and the CLI must keep working beside the daemon.
 *
 * Taking the lock is atomic and never shows a half-written file: the record (PID, process start
 * time, host, date) is written to a private temp file, then hard-linked to the lock name, which
 * fails with EEXIST while a lock is there. A lock whose process is gone (crash, kill -9, reboot)
 * or whose PID now belongs to another process (start time differs, as after a container
 * restart) is stale and is taken over. Only one starter may remove a stale lock: it must first
 * create `daemon.lock.takeover` exclusively, and it removes the lock only if it still holds the
 * stale record; everyone else retries the link, so exactly one starter wins.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { readIfExists } from './files.js';
import { StoreProblem } from '../port/problems.js';
import { checkDataFolderAccess, withPermission } from './permission.js';

export const LOCK_FILE = 'daemon.lock';
/** A takeover file older than this was left by a starter that died while breaking a lock. */
const TAKEOVER_STALE_MS = 10_000;
const ATTEMPTS = 200;

interface Holder {
  pid: number;
  /** Start time of the process in clock ticks since boot (/proc/PID/stat), when known. */
  started: string | null;
  host: string;
  since: string;
}

export class FolderLock {
  private constructor(
    readonly file: string,
    private readonly record: string,
  ) {}

  /** Takes the data folder's lock, or throws data_folder_locked naming the daemon that has it. */
  static async acquire(dataDir: string): Promise<FolderLock> {
    const file = path.join(dataDir, LOCK_FILE);
    const me: Holder = { pid: process.pid, started: startTicks(process.pid), host: os.hostname(), since: new Date().toISOString() };
    const record = JSON.stringify(me) + '\n';
    const tmp = `${file}.${process.pid}.${crypto.randomBytes(4).toString('hex')}`;
    // A daemon run as a user who may not use the folder, or what it holds, stops here in one line.
    checkDataFolderAccess(dataDir);
    withPermission(() => {
      fs.mkdirSync(dataDir, { recursive: true, mode: 0o700 });
      fs.writeFileSync(tmp, record, { mode: 0o600 });
    }, dataDir);
    try {
      for (let i = 0; i < ATTEMPTS; i++) {
        try {
          fs.linkSync(tmp, file);
          return new FolderLock(file, record);
        } catch (err) {
          if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
        }
        const raw = readIfExists(file);
        if (raw === null) continue; // released in between: link again
        const holder = parseHolder(raw);
        if (holder && isRunning(holder)) throw locked(dataDir, file, holder);
        await removeStale(file, raw);
      }
      throw new Error(`could not take ${file}: it kept changing`);
    } finally {
      fs.rmSync(tmp, { force: true });
    }
  }

  /** Removes the lock file if it is still this process's (never another daemon's). */
  release(): void {
    if (readIfExists(this.file) === this.record) fs.rmSync(this.file, { force: true });
  }
}

/** Removes the stale lock `raw` unless another starter is doing so or has taken the lock since. */
async function removeStale(file: string, raw: string): Promise<void> {
  const takeover = `${file}.takeover`;
  let fd: number;
  try {
    fd = fs.openSync(takeover, 'wx', 0o600);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    if (ageMs(takeover) > TAKEOVER_STALE_MS) fs.rmSync(takeover, { force: true });
    await sleep(10 + Math.random() * 20);
    return;
  }
  try {
    if (readIfExists(file) === raw) fs.rmSync(file, { force: true });
  } finally {
    fs.closeSync(fd);
    fs.rmSync(takeover, { force: true });
  }
}

/** True while the holder's process runs: same PID and, where /proc tells, same start time. */
function isRunning(h: Holder): boolean {
  // Our own PID in the file is a previous run's (containers restart with the same PIDs).
  if (h.pid === process.pid) return false;
  try {
    process.kill(h.pid, 0);
  } catch (err) {
    // EPERM: the process exists but belongs to another user.
    if ((err as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  const now = startTicks(h.pid);
  return h.started === null || now === null || now === h.started;
}

/** Field 22 of /proc/PID/stat (start time); null where there is no /proc or no such process. */
function startTicks(pid: number): string | null {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) is in parentheses and may contain spaces: count from after it.
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19] ?? null;
  } catch {
    return null;
  }
}

function parseHolder(raw: string): Holder | null {
  try {
    const h = JSON.parse(raw) as Partial<Holder>;
    return Number.isInteger(h.pid) && (h.pid as number) > 0
      ? { pid: h.pid as number, started: typeof h.started === 'string' ? h.started : null, host: String(h.host ?? '?'), since: String(h.since ?? '?') }
      : null;
  } catch {
    return null; // unreadable: nobody can be running under it
  }
}

function locked(dataDir: string, file: string, h: Holder): StoreProblem {
  return new StoreProblem(
    'data_folder_locked',
    `the data folder ${dataDir} is in use by another postrider daemon (PID ${h.pid} on ${h.host}, since ${h.since}); ` +
      `two daemons on one folder would deliver the same queue. Stop that one first; if no postrider runs as PID ${h.pid}, remove ${file}.`,
  );
}

function ageMs(file: string): number {
  try {
    return Date.now() - fs.statSync(file).mtimeMs;
  } catch {
    return 0;
  }
}
