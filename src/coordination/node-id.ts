/**
 * The node's identity for one data folder: generated once, kept in `<dataDir>/node-id` (mode
 * 0600, as initial-api-key), and read back at every start. It must not change across restarts
 * of one data folder: queue leases and coordination leases carry it, and lease recovery at start
 * takes back the leases of this node (a previous run of it), never those of another live node.
 *
 * Creating it is atomic and never shows a half-written file (as folder-lock.ts takes its lock):
 * the id is written to a private temp file, then hard-linked to `node-id`, which fails with
 * EEXIST when another process (the CLI beside the daemon) created it first; both then read the
 * one that won.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

export const NODE_ID_FILE = 'node-id';

/** What an id may look like: it goes into lease rows and log lines. */
const NODE_ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

/** True for a usable node id (1 to 64 letters, digits, dots, dashes, underscores). */
export function isNodeId(id: string): boolean {
  return NODE_ID.test(id);
}

/** The data folder's node id, created on first use. Throws naming the file when it holds no valid id. */
export function loadNodeId(dataDir: string): string {
  const file = path.join(dataDir, NODE_ID_FILE);
  const found = readId(file);
  if (found !== null) return found;
  fs.mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const tmp = `${file}.${process.pid}.${crypto.randomBytes(4).toString('hex')}`;
  fs.writeFileSync(tmp, crypto.randomUUID() + '\n', { mode: 0o600 });
  try {
    fs.linkSync(tmp, file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  } finally {
    fs.rmSync(tmp, { force: true });
  }
  const id = readId(file);
  if (id === null) throw new Error(`${file} disappeared while it was being created`);
  return id;
}

/** The id in the file, null when there is no file; throws when the file holds something else. */
function readId(file: string): string | null {
  let raw: string;
  try {
    raw = fs.readFileSync(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
  const id = raw.trim();
  if (!isNodeId(id)) {
    // Not replaced silently: a new id would orphan the leases this node holds under the old one.
    throw new Error(`${file} does not hold a node id (1 to 64 letters, digits, '.', '_' or '-'); fix or remove it`);
  }
  return id;
}
