/**
 * A throw-away PostgreSQL cluster for a benchmark: the same start as the tests' harness
 * (test/support/postgres.ts, which bench/ does not import), kept small: temp folder, initdb,
 * 127.0.0.1 on a free port, fsync and synchronous_commit on, a user and a database. As root the
 * server runs as Debian's `postgres` user. Registered with cleanup.mjs, so Ctrl-C stops it.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { onCleanup } from './cleanup.mjs';

function binDir() {
  if (process.env.POSTRIDER_PG_BIN) return process.env.POSTRIDER_PG_BIN;
  const root = '/usr/lib/postgresql';
  const majors = fs.existsSync(root) ? fs.readdirSync(root).filter((d) => fs.existsSync(`${root}/${d}/bin/initdb`)).sort((a, b) => b - a) : [];
  if (!majors.length) throw new Error('PostgreSQL server binaries not found: apt-get install -y postgresql (Debian package `postgresql`)');
  return `${root}/${majors[0]}/bin`;
}

/** conf: more postgresql.conf lines (e.g. shared_preload_libraries for pg_stat_statements). */
export async function startPostgres({ conf = '' } = {}) {
  const bin = binDir();
  const asPg = process.getuid() === 0;
  const run = (prog, args, input) => {
    const [cmd, argv] = asPg ? ['runuser', ['-u', 'postgres', '--', `${bin}/${prog}`, ...args]] : [`${bin}/${prog}`, args];
    const r = spawnSync(cmd, argv, { encoding: 'utf8', input, cwd: os.tmpdir() });
    if (r.status !== 0) throw new Error(`${prog} failed: ${r.stdout}${r.stderr}`);
  };
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'postrider-bench-pg-'));
  if (asPg) spawnSync('chown', ['postgres:postgres', dir]);
  const data = `${dir}/data`;
  const port = await new Promise((resolve) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => { const p = s.address().port; s.close(() => resolve(p)); });
  });
  let unregister = () => {};
  const stop = () => {
    unregister();
    run('pg_ctl', ['stop', '-D', data, '-m', 'fast', '-w']);
    fs.rmSync(dir, { recursive: true, force: true });
  };
  run('initdb', ['-D', data, '-U', 'postgres', '--auth-local=trust', '--auth-host=scram-sha-256', '--locale=C', '-E', 'UTF8']);
  fs.appendFileSync(`${data}/postgresql.conf`, `\nlisten_addresses='127.0.0.1'\nport=${port}\nunix_socket_directories='${dir}'\nfsync=on\nsynchronous_commit=on\nmax_connections=200\n${conf}`);
  run('pg_ctl', ['start', '-D', data, '-l', `${dir}/server.log`, '-w']);
  unregister = onCleanup(stop);
  run('psql', ['-X', '-q', '-v', 'ON_ERROR_STOP=1', '-h', dir, '-p', String(port), '-U', 'postgres', '-d', 'postgres'],
    "CREATE ROLE bench LOGIN PASSWORD 'bench';\nCREATE DATABASE bench OWNER bench;\n");
  // data: the cluster's data folder (postmaster.pid: the postmaster's pid, for its CPU time).
  return { url: `postgres://bench:bench@127.0.0.1:${port}/bench`, port, dir, data, stop };
}
