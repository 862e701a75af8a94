/**
 * Preload for the daemon (node --require): V8's sampling heap profiler on the MAIN thread,
 * keeping the samples of objects the GC has already collected, so the profile shows every
 * byte allocated (garbage included), not only what is still live (which is all that
 * `node --heap-prof` keeps). SIGUSR2 starts sampling; the next SIGUSR2 stops it and writes the
 * profile to $BENCH_HEAP_PROFILE (a .heapprofile, Chrome DevTools' format), then
 * $BENCH_HEAP_PROFILE.done. Interval: $BENCH_HEAP_INTERVAL bytes (default 8192).
 */
'use strict';
const { isMainThread } = require('node:worker_threads');

if (isMainThread && process.env.BENCH_HEAP_PROFILE) {
  const fs = require('node:fs');
  const inspector = require('node:inspector');
  const out = process.env.BENCH_HEAP_PROFILE;
  const interval = Number(process.env.BENCH_HEAP_INTERVAL || 8192);
  const session = new inspector.Session();
  session.connect();
  let sampling = false;
  const post = (method, params) =>
    new Promise((resolve, reject) => session.post(method, params, (err, res) => (err ? reject(err) : resolve(res))));
  process.on('SIGUSR2', async () => {
    try {
      if (!sampling) {
        sampling = true;
        await post('HeapProfiler.enable');
        await post('HeapProfiler.startSampling', {
          samplingInterval: interval,
          includeObjectsCollectedByMajorGC: true,
          includeObjectsCollectedByMinorGC: true,
        });
        fs.writeFileSync(`${out}.started`, '');
      } else {
        sampling = false;
        const { profile } = await post('HeapProfiler.stopSampling');
        fs.writeFileSync(out, JSON.stringify(profile));
        fs.writeFileSync(`${out}.done`, '');
      }
    } catch (err) {
      fs.writeFileSync(`${out}.error`, String(err?.stack ?? err));
    }
  });
}
