/** Small file helpers for the files next to the store (marker, lock). */
import fs from 'node:fs';

/** The file's text, or null when it does not exist (other errors are thrown). */
export function readIfExists(file: string): string | null {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
}
