/**
 * The private folders a backup writes its copy in (env.ts backup), and what a killed backup left
 * of them. A backup killed mid-copy (kill -9, a reboot, an OOM kill) cannot clean up after itself;
 * its folder holds a partial data.mdb as large as the copy got, on the disk the next backup needs.
 * Each folder names the process that writes it (`owner`), so the next backup into the same folder
 * removes the folders whose writer is gone and leaves a backup that still runs alone.
 */
import fs from 'node:fs';
import path from 'node:path';

const PREFIX = 'incomplete-backup-';
const OWNER = 'owner';
/** A folder with no owner file (made by a version before this one, or killed between mkdtemp and the owner's write) counts as left behind once this old. */
const UNOWNED_AFTER_MS = 60_000;

/** A new private folder in `dir` for one backup's copy, owned by this process. */
export function claimBackupFolder(dir: string): string {
  // mkdtemp makes it 0700: the copy holds DKIM keys and secrets, like the original.
  const folder = fs.mkdtempSync(path.join(dir, PREFIX));
  fs.writeFileSync(path.join(folder, OWNER), `${process.pid}\n`, { mode: 0o600 });
  return folder;
}

/** Removes the folders in `dir` that killed backups left; returns their paths. */
export function removeKilledBackups(dir: string, now = Date.now()): string[] {
  let names: string[];
  try {
    names = fs.readdirSync(dir);
  } catch {
    return []; // no folder yet: nothing was left in it
  }
  const removed: string[] = [];
  for (const name of names) {
    if (!name.startsWith(PREFIX)) continue;
    const folder = path.join(dir, name);
    if (!leftBehind(folder, now)) continue;
    fs.rmSync(folder, { recursive: true, force: true });
    removed.push(folder);
  }
  return removed;
}

function leftBehind(folder: string, now: number): boolean {
  let owner: string;
  try {
    owner = fs.readFileSync(path.join(folder, OWNER), 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') return false; // not a folder, or not ours to read
    return now - fs.statSync(folder).mtimeMs > UNOWNED_AFTER_MS;
  }
  const pid = Number.parseInt(owner, 10);
  return !(Number.isSafeInteger(pid) && pid > 0 && alive(pid));
}

/** Whether a process of this pid exists (signal 0 checks without sending; EPERM: it exists, another user's). */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}
