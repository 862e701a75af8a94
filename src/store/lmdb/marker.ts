/**
 * The data folder remembers that it has held a store: `store-created`, written next to db/ once
 * the first store in the folder has committed, and checked on every start by everything that
 * opens the store (daemon and CLI). Without it, a deleted or emptied db/data.mdb looks like a
 * new install, and the daemon would create a new account and key over all lost data, queue
 * and keys without a word. With it, that start is refused and the operator is told to restore.
 */
import fs from 'node:fs';
import path from 'node:path';
import { inspectDataFile, type DataFileInfo } from './data-file.js';
import { readIfExists } from './files.js';
import { RESTORE_HINT, StoreProblem } from '../port/problems.js';

export const MARKER_FILE = 'store-created';
/** Folders from before the marker: the first start wrote this file, so a store was there. */
const LEGACY_EVIDENCE = 'initial-api-key';

export interface FolderState {
  /** data.mdb exists and passed the file-level check. */
  file: DataFileInfo | null;
  /** The marker was found (false on a first start, and once on folders from before it). */
  marked: boolean;
}

/**
 * Decides whether the store in `dbDir` may be opened: a missing or empty data.mdb is a first
 * start only in a folder that never held a store; a non-empty one must pass inspectDataFile.
 */
export function examineDataFolder(dataDir: string, dbDir: string): FolderState {
  const file = path.join(dbDir, 'data.mdb');
  const size = sizeOf(file);
  const since = markerDate(dataDir);
  if (size > 0) return { file: inspectDataFile(file), marked: since !== null };
  if (since !== null || fs.existsSync(path.join(dataDir, LEGACY_EVIDENCE))) {
    const what = size === 0 ? 'is empty (0 bytes)' : 'is missing';
    const held = since ? `has held a store since ${since}` : 'has held a store';
    throw new StoreProblem(
      'store_missing',
      `the data folder ${dataDir} ${held}, but ${file} ${what}; postrider will not start a new, empty store over it. ` +
        `Stop here and ${RESTORE_HINT}, or, to really start afresh, move the whole data folder away.`,
    );
  }
  return { file: null, marked: false };
}

/** Written once the folder's first store has committed; durable before it returns. */
export function writeMarker(dataDir: string, now = new Date()): void {
  const file = path.join(dataDir, MARKER_FILE);
  const tmp = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(
    tmp,
    `postrider store created ${now.toISOString()}\n` +
      `This folder has held a postrider store (db/). While this file is here, postrider refuses to start\n` +
      `a new, empty store when db/data.mdb is missing or empty. Keep it when you restore db/ from a backup.\n`,
    { mode: 0o600 },
  );
  fsyncPath(tmp);
  fs.renameSync(tmp, file);
  fsyncPath(dataDir);
}

/** The creation date the marker records, or null when there is no marker. */
export function markerDate(dataDir: string): string | null {
  const text = readIfExists(path.join(dataDir, MARKER_FILE));
  if (text === null) return null;
  // A marker whose text was damaged still says the folder held a store.
  return /^postrider store created (\S+)/.exec(text)?.[1] ?? 'an unknown date';
}

/** Size in bytes, or -1 when the file does not exist. */
function sizeOf(file: string): number {
  try {
    return fs.statSync(file).size;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return -1;
    throw err;
  }
}

function fsyncPath(p: string): void {
  const fd = fs.openSync(p, 'r');
  try {
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
}
