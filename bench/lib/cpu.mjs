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

/**
 * CPU ms per accepted message: the main thread's during the round (cpu0 → cpuAck), which bounds
 * the intake rate, and every thread's until the messages were finished (cpu0 → cpu1: composed and
 * signed).
 */
export function cpuPerMessage(cpu0, cpuAck, cpu1, ok) {
  if (!cpu0 || !cpuAck || !cpu1 || ok === 0) return null;
  return { mainAck: (cpuAck.main - cpu0.main) / ok, total: (cpu1.total - cpu0.total) / ok };
}

/** Waits until no message waits for its composition or signature (postrider_messages_awaiting_signature is 0). */
export async function finished(p) {
  const deadline = Date.now() + 120_000;
  while ((await p.metric('postrider_messages_awaiting_signature')) > 0) {
    if (Date.now() > deadline) throw new Error('messages still wait for their signature 120 s after the round');
    await new Promise((r) => setTimeout(r, 100));
  }
}
