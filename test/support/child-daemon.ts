/**
 * `postrider serve` as a child process (bin/postrider.js over the built dist/) for tests that
 * kill it, limit it or must see it crash: the reliability and security suites. Ports are chosen
 * once, so a restarted daemon answers where the first one did; the data folder is kept across
 * restarts. Logs (pino JSON on stdout) and stderr are kept for inspection.
 *
 * `netns` runs it inside a network namespace of the test's (test/support/netns.ts).
 *
 * `fsizeLimitBytes` starts the daemon under `prlimit --fsize=<soft>:unlimited`: a file may not
 * grow past the soft limit (write() fails with EFBIG or writes short, as on a full disk), and
 * `setFsizeLimit(null)` lifts it on the running process (raising a soft limit up to the hard one
 * needs no privilege), which is how "space returns" is simulated.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { apiRequest, type ApiOptions, type ApiResponse } from './daemon.js';
import { BIN, freePort } from './cli.js';
import { listensOn } from './port-owner.js';
import { waitFor, type Falsy, type WaitOptions } from './wait.js';
import { testStoreEnv } from './store.js';

const run = promisify(execFile);

export interface ChildDaemonOptions {
  /** Extra POSTRIDER_* variables (they win over the defaults below). */
  env?: Record<string, string>;
  /** An existing data folder; default a new temp folder (removed by close()). */
  dataDir?: string;
  fsizeLimitBytes?: number;
  /** Wait this long for /ready on each start. */
  readyTimeoutMs?: number;
  /**
   * Runs the daemon inside this network namespace (test/support/netns.ts). Its HTTP port must be
   * bridged into the namespace: set `httpPort` before start() and bridge that port.
   */
  netns?: { wrap(cmd: string, args: string[]): [string, string[]] };
  /** Options for node itself, before the script (e.g. `--max-old-space-size=1024`). */
  nodeArgs?: string[];
}

export class ChildDaemon {
  child: ChildProcess | null = null;
  readonly dataDir: string;
  httpPort = 0;
  smtpPort = 0;
  /** Everything the daemon wrote to stdout (its pino log) and stderr, over all its runs. */
  stdout = '';
  stderr = '';
  /** Exit of the current process: code or signal. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }> = Promise.resolve({ code: null, signal: null });
  /** Applies to the next start(); clear it to restart without a limit. */
  fsizeLimitBytes: number | undefined;
  private exitInfo: { code: number | null; signal: NodeJS.Signals | null } | null = null;
  private readonly ownsDataDir: boolean;

  constructor(private readonly opts: ChildDaemonOptions = {}) {
    this.fsizeLimitBytes = opts.fsizeLimitBytes;
    this.ownsDataDir = !opts.dataDir;
    this.dataDir = opts.dataDir ?? fs.mkdtempSync(path.join(os.tmpdir(), 'postrider-child-'));
  }

  get url(): string {
    return `http://127.0.0.1:${this.httpPort}`;
  }

  get pid(): number {
    return this.child?.pid ?? 0;
  }

  /** True while the current process runs. */
  get alive(): boolean {
    return this.child !== null && this.exitInfo === null;
  }

  get exitStatus(): { code: number | null; signal: NodeJS.Signals | null } | null {
    return this.exitInfo;
  }

  /** The account-level key the first start wrote to the data folder. */
  get apiKey(): string {
    return fs.readFileSync(path.join(this.dataDir, 'initial-api-key'), 'utf8').trim();
  }

  /**
   * Starts the process and resolves once GET /ready answers 200. A port this call picks may be
   * taken by another test process before the daemon binds it (a listener on port 0, or an
   * outgoing connection's ephemeral port: freePort's ports are in that range): other ports, twice,
   * as startServe does (cli.ts). Ports set before (a restart keeps its own) are never changed.
   */
  async start(): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      const pickHttp = !this.httpPort;
      const pickSmtp = !this.smtpPort;
      if (pickHttp) this.httpPort = await freePort();
      if (pickSmtp) this.smtpPort = await freePort();
      const stderrBefore = this.stderr.length;
      try {
        return await this.startOnce();
      } catch (err) {
        // This run's own words: stderr holds every earlier run's too.
        const taken = /cannot listen on .* already in use/.test(this.stderr.slice(stderrBefore));
        if (attempt === 3 || !taken || !(pickHttp || pickSmtp)) throw err;
        if (pickHttp) this.httpPort = 0;
        if (pickSmtp) this.smtpPort = 0;
      }
    }
  }

  private async startOnce(): Promise<void> {
    const env: NodeJS.ProcessEnv = {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      HOME: process.env.HOME ?? '/tmp',
      POSTRIDER_DATA_DIR: this.dataDir,
      POSTRIDER_HTTP_PORT: String(this.httpPort),
      POSTRIDER_SMTP_PORT: String(this.smtpPort),
      POSTRIDER_HOSTNAME: 'postrider.test',
      POSTRIDER_LOG_LEVEL: 'warn',
      POSTRIDER_WORKERS_THREADS: '1',
      POSTRIDER_DELIVERY_ENABLED: 'false',
      POSTRIDER_SHUTDOWN_GRACE_MS: '2s',
      ...testStoreEnv(this.dataDir),
      ...this.opts.env,
    };
    const args = [...(this.opts.nodeArgs ?? []), BIN, 'serve'];
    const limit = this.fsizeLimitBytes;
    let [cmd, argv]: [string, string[]] = limit === undefined ? [process.execPath, args] : ['prlimit', [`--fsize=${limit}:unlimited`, process.execPath, ...args]];
    // `ip netns exec` and prlimit exec the next program: the child's pid stays the daemon's.
    if (this.opts.netns) [cmd, argv] = this.opts.netns.wrap(cmd, argv);
    const child = spawn(cmd, argv, { env, stdio: ['ignore', 'pipe', 'pipe'] });
    this.child = child;
    this.exitInfo = null;
    child.stdout!.on('data', (d) => (this.stdout += d));
    child.stderr!.on('data', (d) => (this.stderr += d));
    this.exited = new Promise((resolve) =>
      child.once('exit', (code, signal) => {
        this.exitInfo = { code, signal };
        resolve(this.exitInfo);
      }),
    );
    await this.waitReady(this.opts.readyTimeoutMs ?? 30_000);
  }

  /** Fails at once if the process exits first; kills it if it is still not ready at the timeout. */
  private async waitReady(timeoutMs: number): Promise<void> {
    // Our child's answer, not another test's daemon that took the port we picked (port-owner.ts).
    const ready = async () =>
      (await fetch(`${this.url}/ready`, { signal: AbortSignal.timeout(2000) })).status === 200 && this.child?.pid !== undefined && listensOn(this.child.pid, this.httpPort!);
    await this.whileAlive(ready, { what: 'postrider serve to answer GET /ready with 200', timeout: timeoutMs }).catch((err: Error) => {
      this.child?.kill('SIGKILL'); // still running but not ready: do not leave it behind
      throw err;
    });
  }

  /** kill -9 and wait until the process is gone. */
  async kill9(): Promise<void> {
    if (!this.alive) return;
    this.child!.kill('SIGKILL');
    await this.exited;
  }

  /** SIGTERM (graceful); SIGKILL after timeoutMs. */
  async stop(timeoutMs = 15_000): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
    if (!this.alive) return this.exitInfo ?? { code: null, signal: null };
    this.child!.kill('SIGTERM');
    const timer = setTimeout(() => this.child?.kill('SIGKILL'), timeoutMs);
    const info = await this.exited;
    clearTimeout(timer);
    return info;
  }

  /** Lifts (null) or sets the soft file size limit of the running process. */
  async setFsizeLimit(bytes: number | null): Promise<void> {
    await run('prlimit', ['--pid', String(this.pid), `--fsize=${bytes ?? 'unlimited'}:unlimited`]);
  }

  /** The daemon's pino log so far (POSTRIDER_LOG_LEVEL decides how much), one record per line. */
  logRecords(): Array<Record<string, unknown> & { msg: string }> {
    return this.stdout
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as Record<string, unknown> & { msg: string });
  }

  /**
   * waitFor while the daemon runs: fails at once, with the daemon's stderr, when the process
   * exits first (a crash is what such tests look for).
   */
  async whileAlive<T>(ok: () => T, { what, timeout = 20_000 }: WaitOptions): Promise<Exclude<Awaited<T>, Falsy>> {
    const exited = () => !this.alive && `postrider serve exited (${JSON.stringify(this.exitInfo)})`;
    return waitFor(ok, { what, timeout, failFast: exited }).catch((err: Error) => {
      throw new Error(`${err.message}\nstderr: ${this.stderr.slice(-4000)}`);
    });
  }

  /** Stops the process (SIGKILL if needed) and removes a data folder this object made. */
  async close(): Promise<void> {
    if (this.alive) await this.stop(5_000);
    if (this.ownsDataDir) fs.rmSync(this.dataDir, { recursive: true, force: true });
  }

  /** fetch against the daemon; the body is parsed as JSON when it is JSON. */
  api(method: string, urlPath: string, o: ApiOptions = {}): Promise<ApiResponse> {
    return apiRequest(this.url, () => this.apiKey, method, urlPath, { ...o, signal: o.signal ?? AbortSignal.timeout(30_000) }).catch((err: Error) => {
      // A refused connection usually means the daemon is gone: say how it ended and what it said.
      if (this.alive) throw err;
      throw new Error(`${method} ${urlPath}: ${err.message}; postrider serve exited (${JSON.stringify(this.exitInfo)})\nstderr: ${this.stderr.slice(-4000)}\nlog: ${this.stdout.slice(-4000)}`, { cause: err });
    });
  }
}

/** True when `prlimit` (util-linux) can start a process with a file size limit here. */
export async function prlimitAvailable(): Promise<boolean> {
  try {
    await run('prlimit', ['--fsize=1000000:unlimited', 'true']);
    return true;
  } catch {
    return false;
  }
}
