/**
 * Runs the real `postrider` command (bin/postrider.js over the built dist/) as a child process,
 * for end-to-end tests. The child gets a minimal environment: no POSTRIDER_* variable of the
 * test runner leaks into it, only the ones a test passes, and, when the tests run on PostgreSQL
 * (support/store.ts), the store settings of the data folder it names in POSTRIDER_DATA_DIR.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import net from 'node:net';
import { fileURLToPath } from 'node:url';
import { testStoreEnv } from './store.js';
import { waitFor } from './wait.js';

export const BIN = fileURLToPath(new URL('../../bin/postrider.js', import.meta.url));

export interface CliResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** The child's environment: PATH, HOME, the test engine's store and `env`; a variable given as undefined is left out. */
function childEnv(env: Record<string, string | undefined>): NodeJS.ProcessEnv {
  const store = env.POSTRIDER_DATA_DIR ? testStoreEnv(env.POSTRIDER_DATA_DIR) : {};
  const out: NodeJS.ProcessEnv = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/tmp', ...store };
  for (const [k, v] of Object.entries(env)) if (v !== undefined) out[k] = v;
  return out;
}

export interface CliOptions {
  /** A command that runs node for us (e.g. setpriv with its options), before `node bin/postrider.js`. */
  wrap?: string[];
  /** The working folder (default the test runner's). */
  cwd?: string;
}

/** Runs `postrider ...args` to completion. */
export function runCli(args: string[], env: Record<string, string>, timeoutMs = 20_000, o: CliOptions = {}): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const [cmd, ...argv] = [...(o.wrap ?? []), process.execPath, BIN, ...args];
    const child = spawn(cmd, argv, { env: childEnv(env), cwd: o.cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`postrider ${args.join(' ')} did not finish within ${timeoutMs} ms\nstderr: ${stderr}`));
    }, timeoutMs);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr });
    });
  });
}

/** A port that was free a moment ago on loopback. */
export async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

export interface ServeProcess {
  child: ChildProcess;
  port: number;
  url: string;
  stdout(): string;
  stderr(): string;
  /** Sends the signal and resolves with the exit code and how long the exit took. */
  stop(signal?: NodeJS.Signals): Promise<{ code: number | null; ms: number }>;
}

/**
 * Starts `postrider serve` on a free loopback port with SMTP and delivery off and quiet logs,
 * and resolves once the HTTP API answers.
 */
export async function startServe(env: Record<string, string | undefined>, timeoutMs = 20_000): Promise<ServeProcess> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await spawnServe(await freePort(), env, timeoutMs);
    } catch (err) {
      // The port freePort found was taken by another test process before the daemon bound it
      // (a listener on port 0, or an outgoing connection's ephemeral port): another port, twice.
      if (attempt === 3 || !/HTTP API cannot listen on .* already in use/.test((err as Error).message)) throw err;
    }
  }
}

async function spawnServe(port: number, env: Record<string, string | undefined>, timeoutMs: number): Promise<ServeProcess> {
  const child = spawn(process.execPath, [BIN, 'serve'], {
    env: childEnv({
      POSTRIDER_HTTP_PORT: String(port),
      POSTRIDER_SMTP_ENABLED: 'false',
      POSTRIDER_DELIVERY_ENABLED: 'false',
      POSTRIDER_LOG_LEVEL: 'warn',
      POSTRIDER_WORKERS_THREADS: '1',
      ...env,
    }),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (d) => (stdout += d));
  child.stderr!.on('data', (d) => (stderr += d));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  let exitCode: number | null | undefined;
  void exited.then((c) => (exitCode = c));

  const url = `http://127.0.0.1:${port}`;
  // /errors/{code} is public: it answers without a key once the API is up.
  const answers = async () => (await fetch(`${url}/errors/not_found`)).status === 200;
  const exitedEarly = () => exitCode !== undefined && `postrider serve exited with ${exitCode}`;
  await waitFor(answers, { what: 'postrider serve to answer on its HTTP port', timeout: timeoutMs, failFast: exitedEarly }).catch((err: Error) => {
    child.kill('SIGKILL'); // not answering: do not leave it behind (a no-op once it has exited)
    throw new Error(`${err.message}\nstderr: ${stderr}\nlog: ${stdout.slice(-4000)}`);
  });

  return {
    child,
    port,
    url,
    stdout: () => stdout,
    stderr: () => stderr,
    async stop(signal = 'SIGTERM') {
      const started = Date.now();
      if (exitCode === undefined) child.kill(signal);
      const code = await Promise.race([
        exited,
        new Promise<never>((_, reject) =>
          setTimeout(() => {
            child.kill('SIGKILL');
            reject(new Error(`postrider serve did not exit within 15 s of ${signal}`));
          }, 15_000).unref(),
        ),
      ]);
      return { code, ms: Date.now() - started };
    },
  };
}

/** fetch with a bearer key and a JSON body; resolves with status and parsed body. */
export async function call(url: string, method: string, key: string, body?: unknown): Promise<{ status: number; body: any }> {
  const headers: Record<string, string> = { authorization: `Bearer ${key}` };
  if (body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(url, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null };
}
