/**
 * One daemon per data folder (daemon.lock): a second `postrider serve` on the same folder exits
 * 75 with one line naming the first, even when both start at the same moment, while the CLI
 * keeps working beside the running daemon; a lock left by a dead daemon, or naming a PID that
 * now belongs to another process, is taken over.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ChildDaemon } from '../support/child-daemon.js';
import { runCli } from '../support/cli.js';

let tmp: string;
const daemons: ChildDaemon[] = [];

beforeAll(() => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'postrider-lock-'));
});

afterAll(async () => {
  await Promise.all(daemons.map((d) => d.close()));
  fs.rmSync(tmp, { recursive: true, force: true });
});

function daemon(dataDir?: string): ChildDaemon {
  const d = new ChildDaemon({ dataDir });
  daemons.push(d);
  return d;
}

function lockHolder(dataDir: string): { pid: number } {
  return JSON.parse(fs.readFileSync(path.join(dataDir, 'daemon.lock'), 'utf8'));
}

describe('the data folder lock', () => {
  it('makes a second daemon on the same folder exit 75 naming the first, while the first serves and the CLI works beside it', async () => {
    const first = daemon();
    await first.start();
    const second = daemon(first.dataDir);
    await expect(second.start()).rejects.toThrow(/exited/);

    expect(second.exitStatus).toEqual({ code: 75, signal: null });
    const lines = second.stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain(`the data folder ${first.dataDir} is in use by another postrider daemon (PID ${first.pid}`);
    expect((await fetch(`${first.url}/ready`)).status).toBe(200);
    const keys = await runCli(['keys', 'list', '--json'], { POSTRIDER_DATA_DIR: first.dataDir });
    expect(keys.code, keys.stderr).toBe(0);
    expect(JSON.parse(keys.stdout)).toHaveLength(1);
    expect(lockHolder(first.dataDir).pid).toBe(first.pid);
  }, 60_000);

  it('lets exactly one of two daemons started at the same moment on a new folder serve', async () => {
    const dir = path.join(tmp, 'race');
    const [a, b] = [daemon(dir), daemon(dir)];
    const results = await Promise.allSettled([a.start(), b.start()]);

    expect(results.map((r) => r.status).sort()).toEqual(['fulfilled', 'rejected']);
    const [winner, loser] = results[0].status === 'fulfilled' ? [a, b] : [b, a];
    expect(loser.exitStatus).toEqual({ code: 75, signal: null });
    expect(loser.stderr).toContain(`(PID ${winner.pid}`);
    expect(lockHolder(dir).pid).toBe(winner.pid);
    await winner.stop();
    expect(fs.existsSync(path.join(dir, 'daemon.lock'))).toBe(false);
  }, 60_000);

  it('takes over the lock of a daemon killed with SIGKILL', async () => {
    const d = daemon();
    await d.start();
    const deadPid = d.pid;
    await d.kill9();
    expect(lockHolder(d.dataDir).pid).toBe(deadPid);

    await d.start();
    expect(lockHolder(d.dataDir).pid).toBe(d.pid);
  }, 60_000);

  it('takes over a lock whose PID now belongs to another process (another start time)', async () => {
    const dir = path.join(tmp, 'reused');
    fs.mkdirSync(dir);
    // The test runner's PID is alive, but it is not the process that wrote this lock.
    fs.writeFileSync(path.join(dir, 'daemon.lock'), JSON.stringify({ pid: process.pid, started: '1', host: os.hostname(), since: '2020-01-01T00:00:00Z' }) + '\n');
    const d = daemon(dir);
    await d.start();
    expect(lockHolder(dir).pid).toBe(d.pid);
  }, 60_000);
});
