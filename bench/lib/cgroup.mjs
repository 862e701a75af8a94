/**
 * A throw-away memory cgroup for a benchmark: the daemon runs inside a hard memory limit, so a
 * run shows whether its memory is bounded (anonymous memory under the limit, LMDB's mapped file
 * pages reclaimed by the kernel as it needs them) rather than what an unconstrained RSS happens
 * to reach. cgroup v2 (memory.max, memory.events) or v1 (memory.limit_in_bytes,
 * memory.oom_control); null when neither can be created here (no root, read-only /sys/fs/cgroup).
 */
import fs from 'node:fs';
import path from 'node:path';

const V2_ROOT = '/sys/fs/cgroup';
const V1_ROOT = '/sys/fs/cgroup/memory';

function tryMake(dir) {
  try {
    fs.mkdirSync(dir);
    return true;
  } catch {
    return false;
  }
}

function readNumber(file, key) {
  try {
    const text = fs.readFileSync(file, 'utf8');
    if (key === undefined) return Number(text.trim());
    return Number(new RegExp(`^${key} (\\d+)$`, 'm').exec(text)?.[1] ?? NaN);
  } catch {
    return NaN;
  }
}

/** A memory cgroup limited to `limitMb`, or null when this machine does not allow one. */
export function memoryCgroup(limitMb) {
  const name = `postrider-bench-${process.pid}-${Date.now()}`;
  const bytes = String(limitMb * 1024 * 1024);
  const isV2 = fs.existsSync(path.join(V2_ROOT, 'cgroup.controllers'));
  const dir = path.join(isV2 ? V2_ROOT : V1_ROOT, name);
  if (!tryMake(dir)) return null;
  try {
    // v1: no swap inside the group either, so the limit is real (memsw exists only with swap accounting).
    if (isV2) fs.writeFileSync(path.join(dir, 'memory.max'), bytes);
    else {
      fs.writeFileSync(path.join(dir, 'memory.limit_in_bytes'), bytes);
      if (fs.existsSync(path.join(dir, 'memory.memsw.limit_in_bytes'))) fs.writeFileSync(path.join(dir, 'memory.memsw.limit_in_bytes'), bytes);
    }
  } catch {
    fs.rmdirSync(dir);
    return null;
  }
  return {
    version: isV2 ? 2 : 1,
    limitMb,
    procs: path.join(dir, 'cgroup.procs'),
    /** OOM kills inside the group so far. */
    oomKills: () => (isV2 ? readNumber(path.join(dir, 'memory.events'), 'oom_kill') : readNumber(path.join(dir, 'memory.oom_control'), 'oom_kill')),
    /** The group's peak charge (MB): anonymous memory plus the page cache charged to it. */
    peakMb: () => (isV2 ? readNumber(path.join(dir, 'memory.peak')) : readNumber(path.join(dir, 'memory.max_usage_in_bytes'))) / 1048576,
    /** Removes the group (it must be empty: call after the daemon exited). */
    remove: () => {
      try {
        fs.rmdirSync(dir);
      } catch {
        /* still in use or gone: the kernel removes nothing by itself, but a leftover group is harmless */
      }
    },
  };
}
