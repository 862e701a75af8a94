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

/**
 * CPU ms used so far by a process and all its children, for a server that forks a process per
 * job (Postfix's master: smtpd, cleanup, qmgr, smtp, …): the root's own time and that of the
 * children it reaped (cutime + cstime: the ones that ended), plus the live children's. A child
 * live at one reading and reaped by the next is counted right: its time moves from the live sum
 * into the root's cutime. Grandchildren count once their parent reaped them. Null off Linux.
 */
export function processTreeCpuMs(rootPid) {
  const fields = (pid) => {
    const line = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return line.slice(line.lastIndexOf(') ') + 2).split(' '); // [1] ppid, [11] utime, [12] stime, [13] cutime, [14] cstime
  };
  try {
    const root = fields(rootPid);
    let ticks = Number(root[11]) + Number(root[12]) + Number(root[13]) + Number(root[14]);
    for (const d of fs.readdirSync('/proc')) {
      if (!/^\d+$/.test(d) || Number(d) === rootPid) continue;
      try {
        const f = fields(d);
        if (Number(f[1]) === rootPid) ticks += Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14]);
      } catch {
        /* ended meanwhile */
      }
    }
    return ticks * TICK_MS;
  } catch {
    return null;
  }
}

/** CPU ms of each thread of a process by thread id, with its name (/proc/PID/task/TID/stat; Linux only). */
export function threadCpuMs(pid) {
  const out = new Map();
  try {
    for (const tid of fs.readdirSync(`/proc/${pid}/task`)) {
      const line = fs.readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
      const name = line.slice(line.indexOf('(') + 1, line.lastIndexOf(')'));
      const f = line.slice(line.lastIndexOf(') ') + 2).split(' ');
      out.set(tid, { name, ms: (Number(f[11]) + Number(f[12])) * 10 });
    }
  } catch {
    return null;
  }
  return out;
}

/** Per thread, CPU ms per message between two threadCpuMs readings, busiest first (threads share names: "node" is main and more). */
export function threadDelta(a, b, n, pid) {
  if (!a || !b) return null;
  const rows = [...b].map(([tid, { name, ms }]) => [tid === String(pid) ? 'main' : `${name}#${tid}`, ms - (a.get(tid)?.ms ?? 0)]);
  return rows.filter(([, ms]) => ms > 0).sort((x, y) => y[1] - x[1]).map(([name, ms]) => `${name} ${(ms / n).toFixed(3)}`).join(', ');
}

/**
 * This process's CPU ms so far: its own (every thread: the load generator's clients) and that of
 * the children it waited for (cutime + cstime of /proc/self/stat: a finished smtp-source).
 */
export function selfCpuMs() {
  const { user, system } = process.cpuUsage();
  let children = null;
  try {
    const line = fs.readFileSync('/proc/self/stat', 'utf8');
    const f = line.slice(line.lastIndexOf(') ') + 2).split(' ');
    children = (Number(f[13]) + Number(f[14])) * TICK_MS;
  } catch {
    /* not Linux */
  }
  return { own: (user + system) / 1000, children };
}

/**
 * Bytes the process caused to be written to storage so far (/proc/PID/io write_bytes: pages it
 * dirtied in the page cache, here LMDB's pwrite of every page a commit touched); null when the
 * file cannot be read (not Linux, another user's process).
 */
export function writtenBytes(pid) {
  try {
    const m = /^write_bytes: (\d+)$/m.exec(fs.readFileSync(`/proc/${pid}/io`, 'utf8'));
    return m ? Number(m[1]) : null;
  } catch {
    return null;
  }
}
