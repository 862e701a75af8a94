/**
 * A throw-away PostgreSQL cluster for one test run (issue 32): a temp folder, `initdb`, `pg_ctl
 * start` on 127.0.0.1 and a free port (its unix socket in the same temp folder), with `fsync` and
 * `synchronous_commit` on (postrider acknowledges only after a durable COMMIT, so the tests run
 * with the settings production needs), a user and a database for the tests, and a connection URL.
 * `stop()` stops the server and removes the folder.
 *
 * Debian's `postgresql` package: the binaries are under /usr/lib/postgresql/<major>/bin (the
 * newest major found is used; POSTRIDER_PG_BIN names another folder). initdb and postgres refuse
 * to run as root: as root they run as Debian's `postgres` user (runuser), and the temp folder is
 * owned by it. Nothing PostgreSQL needs lives outside the temp folder, since the checkout may be
 * in a folder the postgres user cannot read.
 *
 * An abnormal end of the test process: an 'exit' handler stops the server synchronously, and a
 * detached watchdog (its own session, so a kill of the test's process group does not reach it)
 * stops it and removes the folder once the process that started it is gone, even after SIGKILL.
 */
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';

export interface PostgresCluster {
  /** postgres://postrider:…@127.0.0.1:<port>/postrider */
  url: string;
  port: number;
  /** The temp folder: data/, the unix socket, server.log. */
  dir: string;
  /** Stops the server (fast shutdown) and removes the folder; safe to call twice. */
  stop(): Promise<void>;
  /**
   * Stops the server as a crash would (pg_ctl -m immediate: no checkpoint, every connection
   * cut; the next start replays the WAL). The folder stays for start().
   */
  crash(): Promise<void>;
  /**
   * Holds the server still (SIGSTOP to the postmaster and its processes): connections stay open
   * and nothing answers, as with a hung server or a network that drops packets. Returns the
   * function that lets it run again (stop() does too).
   */
  freeze(): () => void;
  /** Starts the server again on the same port and data (after crash()). */
  start(): Promise<void>;
}

const TEST_USER = 'postrider';
const TEST_PASSWORD = 'postrider-test';
const TEST_DB = 'postrider';

/** The folder with initdb, pg_ctl and psql; a clear error naming the package when there is none. */
export function postgresBinDir(): string {
  const override = process.env.POSTRIDER_PG_BIN;
  if (override) {
    if (!fs.existsSync(path.join(override, 'initdb'))) throw new Error(`POSTRIDER_PG_BIN=${override} has no initdb`);
    return override;
  }
  const root = '/usr/lib/postgresql';
  const majors = fs.existsSync(root)
    ? fs
        .readdirSync(root)
        .filter((d) => /^\d+$/.test(d) && fs.existsSync(path.join(root, d, 'bin', 'initdb')))
        .sort((a, b) => Number(b) - Number(a))
    : [];
  if (majors.length === 0) {
    throw new Error(
      'PostgreSQL server binaries not found (no /usr/lib/postgresql/<major>/bin/initdb): install the Debian package ' +
        '`postgresql` (apt-get install -y postgresql), or set POSTRIDER_PG_BIN to a folder with initdb and pg_ctl',
    );
  }
  return path.join(root, majors[0], 'bin');
}

/** How to run PostgreSQL's programs: as the postgres user when this process is root. */
function runAs(): { uid: number; gid: number } | null {
  if (process.getuid?.() !== 0) return null;
  try {
    const uid = Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).trim());
    const gid = Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).trim());
    return { uid, gid };
  } catch {
    throw new Error('running as root, and PostgreSQL refuses root: the `postgres` user (made by the Debian package `postgresql`) is missing');
  }
}

function command(bin: string, args: string[], asPostgres: boolean): [string, string[]] {
  return asPostgres ? ['runuser', ['-u', 'postgres', '--', bin, ...args]] : [bin, args];
}

function run(bin: string, args: string[], asPostgres: boolean, input?: string): string {
  const [cmd, argv] = command(bin, args, asPostgres);
  const r = spawnSync(cmd, argv, { encoding: 'utf8', input, cwd: os.tmpdir(), timeout: 120_000 });
  if (r.status !== 0) {
    throw new Error(`${path.basename(bin)} ${args.join(' ')} failed (${r.error?.message ?? `exit ${r.status}`}):\n${r.stdout}${r.stderr}`);
  }
  return r.stdout;
}

/** The postmaster (first line of postmaster.pid) and its child processes, from /proc. */
function serverPids(data: string): number[] {
  const postmaster = Number(fs.readFileSync(path.join(data, 'postmaster.pid'), 'utf8').split('\n')[0]);
  const parentOf = (pid: string): number => {
    try {
      return Number(fs.readFileSync(`/proc/${pid}/stat`, 'utf8').replace(/^.*\) /s, '').split(' ')[1]);
    } catch {
      return 0; // gone meanwhile
    }
  };
  const children = fs.readdirSync('/proc').filter((d) => /^\d+$/.test(d) && parentOf(d) === postmaster);
  return [postmaster, ...children.map(Number)];
}

function signalAll(pids: number[], signal: NodeJS.Signals): void {
  for (const pid of pids) {
    try {
      process.kill(pid, signal);
    } catch {
      // gone meanwhile
    }
  }
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as net.AddressInfo;
      srv.close(() => resolve(port));
    });
  });
}

/** Starts a fresh cluster; the caller must call stop(). */
export async function startPostgres(): Promise<PostgresCluster> {
  const bin = postgresBinDir();
  const owner = runAs();
  const asPg = owner !== null;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'postrider-pg-'));
  const data = path.join(dir, 'data');
  const log = path.join(dir, 'server.log');
  if (owner) fs.chownSync(dir, owner.uid, owner.gid);
  const pgCtl = path.join(bin, 'pg_ctl');

  let started = false;
  let watchdog: number | undefined;
  let frozen: number[] = [];
  const thaw = (): void => {
    signalAll(frozen, 'SIGCONT');
    frozen = [];
  };
  const stopSync = (): void => {
    thaw();
    if (started) spawnSync(...command(pgCtl, ['stop', '-D', data, '-m', 'immediate', '-w'], asPg), { stdio: 'ignore', timeout: 30_000 });
    started = false;
    fs.rmSync(dir, { recursive: true, force: true });
  };
  const onExit = (): void => stopSync();
  process.once('exit', onExit);

  try {
    // Local socket connections trust (only this user can reach the folder); TCP asks a password.
    run(path.join(bin, 'initdb'), ['-D', data, '-U', 'postgres', '--auth-local=trust', '--auth-host=scram-sha-256', '-E', 'UTF8', '--locale=C', '--no-instructions'], asPg);
    const port = await freePort();
    const settings = [
      `listen_addresses = '127.0.0.1'`,
      `port = ${port}`,
      `unix_socket_directories = '${dir}'`,
      // The durable-acknowledgement promise: a COMMIT returns once its WAL is flushed.
      'fsync = on',
      'synchronous_commit = on',
      'full_page_writes = on',
      'max_connections = 200',
      `logging_collector = off`,
    ];
    fs.appendFileSync(path.join(data, 'postgresql.conf'), `\n# postrider test harness\n${settings.join('\n')}\n`);
    run(pgCtl, ['start', '-D', data, '-l', log, '-w', '-t', '60'], asPg);
    started = true;
    watchdog = startWatchdog(pgCtl, data, dir, asPg);

    const psql = path.join(bin, 'psql');
    const sql =
      `CREATE ROLE ${TEST_USER} LOGIN PASSWORD '${TEST_PASSWORD}';\n` +
      `CREATE DATABASE ${TEST_DB} OWNER ${TEST_USER};\n`;
    run(psql, ['-X', '-q', '-v', 'ON_ERROR_STOP=1', '-h', dir, '-p', String(port), '-U', 'postgres', '-d', 'postgres'], asPg, sql);

    const url = `postgres://${TEST_USER}:${TEST_PASSWORD}@127.0.0.1:${port}/${TEST_DB}`;
    const pgCtlAsync = (args: string[]): Promise<number | null> => {
      const [cmd, argv] = command(pgCtl, args, asPg);
      return new Promise((resolve) => spawn(cmd, argv, { stdio: 'ignore' }).on('close', (code) => resolve(code)));
    };
    return {
      url,
      port,
      dir,
      freeze() {
        frozen = serverPids(data);
        signalAll(frozen, 'SIGSTOP');
        return thaw;
      },
      async crash() {
        if (!started) return;
        await pgCtlAsync(['stop', '-D', data, '-m', 'immediate', '-w', '-t', '60']);
        started = false;
      },
      async start() {
        if (started) return;
        const code = await pgCtlAsync(['start', '-D', data, '-l', log, '-w', '-t', '60']);
        if (code !== 0) throw new Error(`pg_ctl start exited ${code}; server.log:\n${fs.readFileSync(log, 'utf8').slice(-4000)}`);
        started = true;
      },
      async stop() {
        thaw();
        process.removeListener('exit', onExit);
        if (watchdog) {
          try {
            process.kill(watchdog, 'SIGKILL');
          } catch {
            // already gone
          }
          watchdog = undefined;
        }
        if (started) {
          const [cmd, argv] = command(pgCtl, ['stop', '-D', data, '-m', 'fast', '-w', '-t', '60'], asPg);
          await new Promise<void>((resolve) => spawn(cmd, argv, { stdio: 'ignore' }).on('close', () => resolve()));
          started = false;
        }
        fs.rmSync(dir, { recursive: true, force: true });
      },
    };
  } catch (err) {
    const serverLog = fs.existsSync(log) ? `\nserver.log:\n${fs.readFileSync(log, 'utf8').slice(-4000)}` : '';
    if (watchdog) process.kill(watchdog, 'SIGKILL');
    process.removeListener('exit', onExit);
    stopSync();
    throw new Error(`${(err as Error).message}${serverLog}`);
  }
}

/**
 * A shell in its own session that waits for this process to end, then stops the server and
 * removes the folder: the cleanup for a test process killed with SIGKILL.
 */
function startWatchdog(pgCtl: string, data: string, dir: string, asPg: boolean): number | undefined {
  const q = (s: string): string => `'${s.replace(/'/g, `'\\''`)}'`;
  const stop = (asPg ? 'runuser -u postgres -- ' : '') + `${q(pgCtl)} stop -D ${q(data)} -m immediate -w`;
  const script = `while kill -0 ${process.pid} 2>/dev/null; do sleep 1; done; ${stop} >/dev/null 2>&1; rm -rf ${q(dir)}`;
  const child = spawn('sh', ['-c', script], { detached: true, stdio: 'ignore' });
  child.unref();
  return child.pid;
}
