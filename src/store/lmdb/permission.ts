/**
 * A permission error on the data folder (EACCES, EPERM; LMDB reports them as the errno 13 or 1)
 * as one line that names the path and the user, instead of a stack trace: the usual cause is a
 * command, or the daemon, run as another user than the one that owns the folder. Used where the
 * store opens (env.ts) and where `serve` takes the folder's lock (folder-lock.ts).
 */
import fs from 'node:fs';
import os from 'node:os';
import nodePath from 'node:path';
import { StoreProblem } from '../port/problems.js';

/**
 * Runs a step that touches the data folder, turning a permission error into permission_denied
 * that names `path`, or else the path of the error.
 */
export function withPermission<T>(step: () => T, path?: string): T {
  try {
    return step();
  } catch (err) {
    const e = err as { code?: unknown; path?: unknown; message?: string };
    const denied = e.code === 'EACCES' || e.code === 'EPERM' || e.code === 13 || e.code === 1 || /permission denied/i.test(e.message ?? '');
    if (!denied) throw err;
    const where = path ?? (typeof e.path === 'string' ? e.path : (/'([^']+)'/.exec(e.message ?? '')?.[1] ?? 'the data folder'));
    throw new StoreProblem('permission_denied', `permission denied on ${where} for user ${currentUser()}; run postrider as the user that owns the data folder (the systemd install: sudo -u postrider postrider …)`);
  }
}

function currentUser(): string {
  try {
    return `${os.userInfo().username} (uid ${process.getuid?.() ?? '?'})`;
  } catch {
    return `uid ${process.getuid?.() ?? '?'}`;
  }
}

/**
 * What the daemon keeps in its data folder besides daemon.lock: the store's folder and files, the
 * node id, the first start's marker and key, the generated certificate. A folder of the right
 * user can still hold some of them owned by another (a first start as root, then the service's
 * user): the daemon would stop on the first one with a stack trace, mid-start.
 */
const DAEMON_ENTRIES = ['db', 'db/data.mdb', 'db/lock.mdb', 'node-id', 'store-created', 'initial-api-key', 'tls', 'tls/smtp-selfsigned.crt', 'tls/smtp-selfsigned.key'];

/**
 * Checks that this user may use what the daemon keeps in `dataDir` (folders: read, write, enter;
 * files: read; LMDB's own open says which file it may not write), or throws permission_denied
 * naming the first entry it may not. Entries that are not there yet are made at start.
 */
export function checkDataFolderAccess(dataDir: string): void {
  for (const entry of DAEMON_ENTRIES) {
    const file = nodePath.join(dataDir, entry);
    let stat: fs.Stats;
    try {
      stat = fs.statSync(file);
    } catch {
      continue;
    }
    const mode = stat.isDirectory() ? fs.constants.R_OK | fs.constants.W_OK | fs.constants.X_OK : fs.constants.R_OK;
    withPermission(() => fs.accessSync(file, mode), file);
  }
}
