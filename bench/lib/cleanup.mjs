/**
 * Everything a benchmark starts (daemons, sinks, Postfix) registers its stop here, so an
 * interrupted run (Ctrl-C, SIGTERM, a thrown error in run.mjs) still stops all of it.
 */
const stoppers = new Set();

/** Registers fn; returns a function that unregisters it (call it once the thing stopped). */
export function onCleanup(fn) {
  stoppers.add(fn);
  return () => stoppers.delete(fn);
}

export async function cleanupAll() {
  const fns = [...stoppers].reverse();
  stoppers.clear();
  for (const fn of fns) await Promise.resolve().then(fn).catch((err) => process.stderr.write(`cleanup: ${err.message}\n`));
}
