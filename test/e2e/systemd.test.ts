/**
 * systemd/postrider.service checked by systemd's own tools (systemd-analyze verify and the
 * offline security review), and src/ops/sd-notify.ts against a stand-in and, where python3 can
 * play the manager's socket, against the real systemd-notify.
 *
 * Needs the Debian packages `systemd` (systemd-analyze, systemd-notify, systemd-sysusers) and
 * `procps` (/bin/kill, named by ExecReload=, which verify checks). When CI is set, a missing
 * systemd-analyze fails the run; on a developer machine without systemd these tests are skipped.
 */
import { execFile, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SdNotifier } from '../../src/ops/sd-notify.js';
import { waitFor } from '../support/wait.js';

const UNIT = fileURLToPath(new URL('../../systemd/postrider.service', import.meta.url));
const SYSUSERS = fileURLToPath(new URL('../../systemd/postrider.sysusers.conf', import.meta.url));
const MAX_EXPOSURE = 2.0;
const IN_CI = /^(1|true|yes)$/i.test(process.env.CI ?? '');

function findExecutable(name: string): string | undefined {
  for (const dir of (process.env.PATH ?? '').split(path.delimiter).filter(Boolean)) {
    const candidate = path.join(dir, name);
    try {
      fs.accessSync(candidate, fs.constants.X_OK);
      return candidate;
    } catch {
      /* next */
    }
  }
  return undefined;
}

function run(cmd: string, args: string[], env: NodeJS.ProcessEnv = process.env): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(cmd, args, { env, timeout: 20_000 }, (err, stdout, stderr) => {
      const code = err ? (typeof err.code === 'number' ? err.code : 1) : 0;
      resolve({ code, stdout: String(stdout), stderr: String(stderr) });
    });
  });
}

const analyze = findExecutable('systemd-analyze');

function requireAnalyze(): string {
  if (!analyze) throw new Error('systemd-analyze not found: apt-get install -y systemd');
  return analyze;
}
let tmp: string;

beforeAll(() => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'postrider-systemd-'));
});

afterAll(() => {
  fs.rmSync(tmp, { recursive: true, force: true });
});

describe('systemd/postrider.service', () => {
  const unit = fs.readFileSync(UNIT, 'utf8');
  const settings = (key: string) => [...unit.matchAll(new RegExp(`^${key}=(.*)$`, 'gm'))].map((m) => m[1].trim());

  it('runs `postrider serve` from /opt/postrider with the config in /etc/postrider and the data in /var/lib/postrider', () => {
    expect(settings('ExecStart')).toEqual(['/usr/bin/node --no-memory-reducer /opt/postrider/bin/postrider.js serve --config /etc/postrider/postrider.jsonc']);
    expect(settings('WorkingDirectory')).toEqual(['/opt/postrider']);
    expect(settings('StateDirectory')).toEqual(['postrider']);
    expect(settings('ConfigurationDirectory')).toEqual(['postrider']);
    expect(settings('Environment')).toContain('POSTRIDER_DATA_DIR=/var/lib/postrider');
    expect(settings('User')).toEqual(['postrider']);
  });

  it('waits for READY=1, reloads with SIGHUP and restarts only after a failure', () => {
    expect(settings('Type')).toEqual(['notify']);
    expect(settings('NotifyAccess')).toEqual(['all']);
    expect(settings('ExecReload')).toEqual(['/bin/kill -HUP $MAINPID']);
    expect(settings('Restart')).toEqual(['on-failure']);
    expect(settings('CapabilityBoundingSet')).toEqual(['CAP_NET_BIND_SERVICE']);
    expect(settings('AmbientCapabilities')).toEqual(['CAP_NET_BIND_SERVICE']);
  });

  it('has systemd-analyze available (required when CI is set)', (ctx) => {
    if (!analyze && !IN_CI) ctx.skip();
    expect(analyze, 'systemd-analyze not found: apt-get install -y systemd').toBeDefined();
  });

  describe.skipIf(!analyze && !IN_CI)('checked by systemd-analyze', () => {
    /** The unit as shipped; only the node path follows the test's node when /usr/bin/node is absent. */
    function unitCopy(): string {
      const dir = fs.mkdtempSync(path.join(tmp, 'unit-'));
      const file = path.join(dir, 'postrider.service');
      const node = fs.existsSync('/usr/bin/node') ? '/usr/bin/node' : process.execPath;
      fs.writeFileSync(file, unit.replaceAll('/usr/bin/node ', `${node} `));
      return file;
    }

    it('passes `systemd-analyze verify` without a warning', async () => {
      const res = await run(requireAnalyze(), ['verify', unitCopy()]);
      expect(res.stderr.trim(), res.stderr).toBe('');
      expect(res.code).toBe(0);
    });

    it(`has an exposure level of at most ${MAX_EXPOSURE} in \`systemd-analyze security --offline=yes\``, async () => {
      const res = await run(requireAnalyze(), ['security', '--offline=yes', '--no-pager', unitCopy()]);
      const m = /Overall exposure level for postrider\.service: (\d+(?:\.\d+)?)/.exec(res.stdout);
      expect(m, `unexpected output (systemd 250 or later is needed for --offline):\n${res.stdout}${res.stderr}`).not.toBeNull();
      const exposure = Number(m![1]);
      expect(exposure, res.stdout).toBeLessThanOrEqual(MAX_EXPOSURE);
    });

    it('has a sysusers.d entry that systemd-sysusers accepts', async (ctx) => {
      const sysusers = findExecutable('systemd-sysusers');
      if (!sysusers) ctx.skip();
      const res = await run(sysusers!, ['--dry-run', SYSUSERS]);
      expect(res.code, res.stderr).toBe(0);
      expect(res.stdout + res.stderr).not.toMatch(/ignoring|failed/i);
    });
  });
});

describe('SdNotifier', () => {
  /** A stand-in for systemd-notify that appends its socket and arguments to a log file. */
  function fakeNotify(exitCode = 0): { command: string; log: string } {
    const dir = fs.mkdtempSync(path.join(tmp, 'notify-'));
    const log = path.join(dir, 'calls.log');
    const command = path.join(dir, 'systemd-notify');
    fs.writeFileSync(command, `#!/bin/sh\necho "$NOTIFY_SOCKET $*" >> '${log}'\n[ ${exitCode} -eq 0 ] || echo 'No such socket' >&2\nexit ${exitCode}\n`, { mode: 0o755 });
    return { command, log };
  }

  it('does nothing when NOTIFY_SOCKET is not set (not started by systemd)', async () => {
    const fake = fakeNotify();
    const errors: Error[] = [];
    const n = new SdNotifier({ env: {}, command: fake.command, onError: (e) => errors.push(e) });
    expect(n.enabled).toBe(false);
    await n.ready();
    await n.stopping();
    expect(fs.existsSync(fake.log)).toBe(false);
    expect(errors).toEqual([]);
  });

  it('sends READY=1, RELOADING=1 with MONOTONIC_USEC and STOPPING=1 in the order asked', async () => {
    const fake = fakeNotify();
    const n = new SdNotifier({ env: { NOTIFY_SOCKET: '/run/systemd/notify' }, command: fake.command });
    expect(n.enabled).toBe(true);
    // Not awaited one by one: the notifier itself must keep the order.
    await Promise.all([n.ready('serving'), n.reloading(), n.ready(), n.stopping()]);
    const lines = fs.readFileSync(fake.log, 'utf8').trim().split('\n');
    expect(lines[0]).toBe('/run/systemd/notify READY=1 STATUS=serving');
    expect(lines[1]).toMatch(/^\/run\/systemd\/notify RELOADING=1 MONOTONIC_USEC=\d+$/);
    expect(lines.slice(2)).toEqual(['/run/systemd/notify READY=1', '/run/systemd/notify STOPPING=1']);
    const usec = Number(lines[1].split('=').pop());
    const uptimeUsec = Number(fs.readFileSync('/proc/uptime', 'utf8').split(' ')[0]) * 1e6;
    // CLOCK_MONOTONIC counts from boot, like /proc/uptime (both exclude suspend).
    expect(Math.abs(usec - uptimeUsec)).toBeLessThan(5e6);
  });

  it('reports a failing systemd-notify through onError and never rejects', async () => {
    const fake = fakeNotify(1);
    const errors: Error[] = [];
    const n = new SdNotifier({ env: { NOTIFY_SOCKET: '/nonexistent' }, command: fake.command, onError: (e) => errors.push(e) });
    await expect(n.ready()).resolves.toBeUndefined();
    expect(errors.map((e) => e.message)).toEqual(['systemd-notify READY=1 failed: No such socket']);
    const missing = new SdNotifier({ env: { NOTIFY_SOCKET: '/nonexistent' }, command: path.join(tmp, 'no-such-binary'), onError: (e) => errors.push(e) });
    await expect(missing.stopping()).resolves.toBeUndefined();
    expect(errors).toHaveLength(2);
  });

  const systemdNotify = findExecutable('systemd-notify');
  const python = findExecutable('python3');

  it.skipIf(!systemdNotify || !python)('reaches a real notify socket through the real systemd-notify, barrier included', async () => {
    const socket = path.join(fs.mkdtempSync(path.join(tmp, 'sock-')), 'notify');
    // The manager's side: receive datagrams, close any passed fd (that releases the barrier).
    const listener = spawn(python!, ['-c', PY_NOTIFY_SOCKET, socket], { stdio: ['ignore', 'pipe', 'inherit'] });
    let received = '';
    listener.stdout.on('data', (d) => (received += d));
    try {
      await waitFor(() => fs.existsSync(socket), { what: 'the notify socket' });
      const errors: Error[] = [];
      const n = new SdNotifier({ env: { NOTIFY_SOCKET: socket, PATH: process.env.PATH }, onError: (e) => errors.push(e) });
      await n.ready('up');
      await n.stopping();
      expect(errors).toEqual([]);
      // The listener prints each datagram as it reads it: wait for all four lines (its pipe may
      // bring the last barrier's after STOPPING=1's).
      await waitFor(() => received.trim().split('\n').length >= 4, { what: 'STOPPING=1 and its barrier at the socket' });
      expect(received.trim().split('\n')).toEqual(['READY=1|STATUS=up', 'BARRIER=1 fd', 'STOPPING=1', 'BARRIER=1 fd']);
    } finally {
      listener.kill();
    }
  });
});

const PY_NOTIFY_SOCKET = `
import array, os, socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(sys.argv[1])
while True:
    data, anc, _, _ = s.recvmsg(4096, socket.CMSG_SPACE(64))
    fds = array.array('i')
    for level, kind, payload in anc:
        if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
            fds.frombytes(payload[:len(payload) - len(payload) % fds.itemsize])
    for fd in fds:
        os.close(fd)
    print(data.decode().replace('\\n', '|') + (' fd' if len(fds) else ''), flush=True)
`;
