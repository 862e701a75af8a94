/**
 * Whether a process has a listening TCP socket on a port (Linux /proc): a free port picked by a
 * test (cli.ts freePort) may be taken by another test's daemon before ours binds it, and a
 * readiness probe on that port would then be answered by the wrong daemon (seen once on the
 * PostgreSQL suite: a daemon that had exited 75 looked ready). Reads the process's own view
 * (/proc/PID/net/tcp*), so it also works for a child in another network namespace.
 */
import fs from 'node:fs';

/** LISTEN in /proc/net/tcp's `st` column. */
const LISTEN = '0A';

export function listensOn(pid: number, port: number): boolean {
  const inodes = listeningInodes(pid, port);
  if (inodes.size === 0) return false;
  let fds: string[];
  try {
    fds = fs.readdirSync(`/proc/${pid}/fd`);
  } catch {
    return false; // gone
  }
  for (const fd of fds) {
    const target = safeReadlink(`/proc/${pid}/fd/${fd}`);
    const m = target && /^socket:\[(\d+)\]$/.exec(target);
    if (m && inodes.has(m[1]!)) return true;
  }
  return false;
}

function listeningInodes(pid: number, port: number): Set<string> {
  const hex = port.toString(16).toUpperCase().padStart(4, '0');
  const inodes = new Set<string>();
  for (const table of ['tcp', 'tcp6']) {
    let text: string;
    try {
      text = fs.readFileSync(`/proc/${pid}/net/${table}`, 'utf8');
    } catch {
      continue;
    }
    for (const line of text.split('\n').slice(1)) {
      const cols = line.trim().split(/\s+/);
      if (cols.length > 9 && cols[1]!.endsWith(`:${hex}`) && cols[3] === LISTEN) inodes.add(cols[9]!);
    }
  }
  return inodes;
}

function safeReadlink(p: string): string | undefined {
  try {
    return fs.readlinkSync(p);
  } catch {
    return undefined;
  }
}
