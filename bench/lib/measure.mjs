/**
 * Latency of a read, for the store benchmarks (activity, messages): a few warm-up
 * calls, then `iterations` timed calls; p50 and p99 in milliseconds.
 */
export function percentile(sorted, p) {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

export function measure(name, fn, iterations, warmups = 3) {
  for (let i = 0; i < Math.min(warmups, iterations); i++) fn(i);
  const times = [];
  let info;
  for (let i = 0; i < iterations; i++) {
    const t0 = process.hrtime.bigint();
    info = fn(i);
    times.push(Number(process.hrtime.bigint() - t0) / 1e6);
  }
  times.sort((a, b) => a - b);
  return { name, p50: percentile(times, 50), p99: percentile(times, 99), iterations, info };
}

/**
 * The same for a read through the store port, whose verbs return promises: each call is awaited
 * before the next starts, so the time includes the microtask a verb costs its caller.
 */
export async function measureAsync(name, fn, iterations, warmups = 3) {
  for (let i = 0; i < Math.min(warmups, iterations); i++) await fn(i);
  const times = [];
  let info;
  for (let i = 0; i < iterations; i++) {
    const t0 = process.hrtime.bigint();
    info = await fn(i);
    times.push(Number(process.hrtime.bigint() - t0) / 1e6);
  }
  times.sort((a, b) => a - b);
  return { name, p50: percentile(times, 50), p99: percentile(times, 99), iterations, info };
}
