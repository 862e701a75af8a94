/**
 * A real fatal error at the worst moment, with no test hook in postrider: a module preloaded
 * into the child daemon (NODE_OPTIONS=--import) that, once armed with SIGUSR2, waits for
 * lmdb-js to start its next write (an async_hooks resource named "write": lmdb-js's native
 * write worker) and then throws an uncaught exception. It first holds the main thread for
 * 50 ms, so the write thread is surely waiting for the main thread to run the batch's
 * transaction callbacks when the exception ends the process: the state in which an exit hangs.
 */
import fs from 'node:fs';
import path from 'node:path';

export const CRASH_MESSAGE = 'injected fatal error while an LMDB write is in flight';

const PRELOAD = `
import { createHook } from 'node:async_hooks';
let armed = false;
process.on('SIGUSR2', () => { armed = true; });
createHook({
  init(_id, type) {
    if (!armed || type !== 'write') return;
    armed = false;
    process.nextTick(() => {
      const until = Date.now() + 50;
      while (Date.now() < until);
      throw new Error(${JSON.stringify(CRASH_MESSAGE)});
    });
  },
}).enable();
`;

/** Writes the preload into `dir` and returns the NODE_OPTIONS value that loads it. */
export function crashOnNextWriteOptions(dir: string): string {
  const file = path.join(dir, 'crash-on-next-write.mjs');
  fs.writeFileSync(file, PRELOAD);
  return `--import=${file}`;
}
