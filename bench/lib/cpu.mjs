/**
 * CPU time a process used so far, ms: its main thread and the whole process (every thread), from
 * /proc (Linux; null elsewhere). Unlike wall time it hardly depends on what else a shared machine
 * runs, so ms per message compare across runs, and bound the rate on idle cores.
 */
import fs from 'node:fs';

const TICK_MS = 1000 / 100; // USER_HZ is 100 on Linux

function ticks(file) {
  const line = fs.readFileSync(file, 'utf8');
  // After the parenthesized command name: utime and stime are the 14th and 15th fields of the line.
  const fields = line.slice(line.lastIndexOf(') ') + 2).split(' ');
  return Number(fields[11]) + Number(fields[12]);
}

export function cpuMs(pid) {
  try {
    return { main: ticks(`/proc/${pid}/task/${pid}/stat`) * TICK_MS, total: ticks(`/proc/${pid}/stat`) * TICK_MS };
  } catch {
    return null;
  }
}
