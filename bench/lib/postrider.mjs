/**
 * Runs the real daemon for a benchmark: `node <the daemon's flags> bin/postrider.js serve`, as the
 * systemd unit and `npm start` run it, as a child process with
 * POSTRIDER_* variables, a temporary data folder, free loopback ports, logs (pino, level info as
 * in production) to a file in that folder. `restart()` reuses the folder with other settings.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { onCleanup } from './cleanup.mjs';

export const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const BIN = path.join(ROOT, 'bin/postrider.js');

/** The node flags of the daemon: those on bin/postrider.js's first line (`#!/usr/bin/env -S node ...`). */
export function daemonNodeFlags(bin = BIN) {
  const first = fs.readFileSync(bin, 'utf8').split('\n', 1)[0];
  const m = /^#!\/usr\/bin\/env -S node((?: --[\w-]+(?:=\S+)?)*)$/.exec(first);
  if (!m) throw new Error(`${bin}: the first line is not "#!/usr/bin/env -S node [--flag ...]": ${first}`);
  return m[1].split(' ').filter(Boolean);
}

export async function freePort() {
  const server = net.createServer();
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address();
  await new Promise((r) => server.close(r));
  return port;
}

/**
 * env: POSTRIDER_* overrides. Defaults: HTTP and SMTP on free ports, API rate limit lifted
 * (autocannon would hit the 600/min default at once), private MX addresses allowed.
 */
export async function startPostrider(env = {}, opts = {}) {
  const dataDir = opts.dataDir ?? fs.mkdtempSync(path.join(os.tmpdir(), 'postrider-bench-'));
  const httpPort = await freePort();
  const smtpPort = await freePort();
  const baseEnv = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('POSTRIDER_')));
  const fullEnv = {
    ...baseEnv,
    POSTRIDER_DATA_DIR: dataDir,
    POSTRIDER_HTTP_PORT: String(httpPort),
    POSTRIDER_SMTP_PORT: String(smtpPort),
    POSTRIDER_HOSTNAME: 'mta.postrider.test',
    POSTRIDER_API_RATE_LIMIT: '1000000',
    POSTRIDER_DELIVERY_ALLOW_PRIVATE: 'true',
    POSTRIDER_LOG_LEVEL: 'info',
    ...env,
  };
  const logFile = path.join(dataDir, 'daemon.log');
  const log = fs.openSync(logFile, 'a');
  // opts.nodeArgs: e.g. ['--cpu-prof', '--cpu-prof-dir=DIR'] (one profile per thread at exit).
  // opts.cgroupProcs: a cgroup's `cgroup.procs` file; the shell joins it and then execs node, so
  // the daemon runs inside it from its first allocation (bench/lib/cgroup.mjs) and keeps the pid.
  // BENCH_NODE_ARGS: the node flags of every daemon a benchmark starts instead of the daemon's
  // own (daemonNodeFlags), split on spaces, for an A/B of a runtime setting: BENCH_NODE_ARGS=''
  // starts node without flags, BENCH_NODE_ARGS='--v8-pool-size=2' with that one alone.
  const override = process.env.BENCH_NODE_ARGS;
  const flags = override === undefined ? daemonNodeFlags() : override.split(' ').filter(Boolean);
  const command = [process.execPath, ...flags, ...(opts.nodeArgs ?? []), BIN, 'serve'];
  const child = opts.cgroupProcs
    ? spawn('/bin/sh', ['-c', 'echo $$ > "$0" && exec "$@"', opts.cgroupProcs, ...command], { cwd: ROOT, env: fullEnv, stdio: ['ignore', log, log] })
    : spawn(command[0], command.slice(1), { cwd: ROOT, env: fullEnv, stdio: ['ignore', log, log] });
  fs.closeSync(log);
  let exited = null;
  child.on('exit', (code, signal) => (exited = { code, signal }));
  let p;
  const unregister = onCleanup(() => (p ? p.stop() : child.kill('SIGKILL')));
  const url = `http://127.0.0.1:${httpPort}`;
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (exited) {
      unregister();
      throw new Error(`postrider exited at start (${JSON.stringify(exited)}); see ${logFile}:\n${tail(logFile)}`);
    }
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      unregister();
      throw new Error(`postrider did not become ready in 30 s; see ${logFile}`);
    }
    try {
      const res = await fetch(`${url}/ready`);
      if (res.status === 200) break;
    } catch {
      /* not listening yet */
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  // opts.apiKey: a node that joins a cluster (store.postgresUrl) whose first node bootstrapped it
  // has no initial-api-key file of its own; it takes that node's key.
  const apiKey = opts.apiKey ?? fs.readFileSync(path.join(dataDir, 'initial-api-key'), 'utf8').trim();

  p = {
    pid: child.pid,
    dataDir,
    url,
    httpPort,
    smtpPort,
    apiKey,
    logFile,
    env,
    async api(method, urlPath, body, headers = {}) {
      const res = await fetch(url + urlPath, {
        method,
        headers: { authorization: `Bearer ${apiKey}`, ...(body ? { 'content-type': 'application/json' } : {}), ...headers },
        body: body ? JSON.stringify(body) : undefined,
      });
      const text = await res.text();
      let parsed = text;
      try {
        parsed = JSON.parse(text);
      } catch {
        /* keep text */
      }
      return { status: res.status, body: parsed };
    },
    /** SIGTERM, wait for the exit (the daemon drains); keepData keeps the folder for restart(). */
    async stop({ keepData = false } = {}) {
      if (!exited) {
        const done = new Promise((r) => child.once('exit', r));
        child.kill('SIGTERM');
        const t = setTimeout(() => child.kill('SIGKILL'), 30_000);
        await done;
        clearTimeout(t);
      }
      unregister();
      // BENCH_KEEP_DATA=1 keeps data folders (and daemon.log) for a look afterwards.
      if (!keepData && !process.env.BENCH_KEEP_DATA) fs.rmSync(dataDir, { recursive: true, force: true });
    },
    /** Stops and starts again on the same data folder with these POSTRIDER_* overrides. */
    async restart(newEnv, newOpts = {}) {
      await p.stop({ keepData: true });
      return startPostrider(newEnv, { apiKey: opts.apiKey, ...newOpts, dataDir });
    },
    /** Sum of a counter (all label sets) from GET /metrics. */
    async metric(name) {
      const text = await (await fetch(`${url}/metrics`)).text();
      let sum = 0;
      const re = new RegExp(`^${name}(\\{[^}]*\\})?\\s+(\\S+)`);
      for (const line of text.split('\n')) {
        const m = re.exec(line);
        if (m) sum += Number(m[2]);
      }
      return sum;
    },
  };
  return p;
}

function tail(file) {
  try {
    return fs.readFileSync(file, 'utf8').split('\n').slice(-15).join('\n');
  } catch {
    return '';
  }
}

/** Fails loudly with the API's answer. */
export function expectStatus(res, status, what) {
  if (res.status !== status) throw new Error(`${what}: HTTP ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
}

function publish(dns, r) {
  dns.set(r.host, r.type.toUpperCase(), [r.value]);
}

/**
 * A live channel with a linked domain whose records are published in the bench DNS server and
 * verified through the API (as test/support/sending.ts does). dkimAlgorithm comes from the
 * daemon's domains.dkimAlgorithm (RSA-2048 by default).
 */
export async function setupSender(p, dns, { domain = 'shop-bench-postrider.com', deliveryType = 'live' } = {}) {
  const ch = expectStatus(await p.api('POST', '/channels', { name: `bench-${domain}`, deliveryType }), 200, 'POST /channels');
  const d = expectStatus(await p.api('POST', '/domains', { name: domain, channelIds: [ch.id] }), 200, 'POST /domains');
  publish(dns, d.dnsRecords.domainKeyActive);
  for (const r of d.dnsRecords.returnPath) publish(dns, r);
  const v = expectStatus(await p.api('POST', `/domains/${d.id}/verify`), 200, 'POST /domains/{id}/verify');
  const states = [v.domainKeyActive, ...(v.returnPath ?? [])].map((r) => r?.status);
  if (states.some((s) => s !== 'verified')) throw new Error(`domain not verified: ${JSON.stringify(v)}`);
  return { channelId: ch.id, domainId: d.id, domain };
}

/**
 * Recipient domains d0..d{n-1}.sink-bench-postrider.com, each with MX mx.sink-bench-postrider.com
 * → 127.0.0.1 (the sink). Names under .test/.example are refused as reserved; these exist only
 * in the bench DNS server.
 */
export const SINK_ZONE = 'sink-bench-postrider.com';
export function publishSinkDomains(dns, n) {
  dns.set(`mx.${SINK_ZONE}`, 'A', ['127.0.0.1']);
  const domains = Array.from({ length: n }, (_, i) => `d${i}.${SINK_ZONE}`);
  for (const d of domains) dns.set(d, 'MX', [`10 mx.${SINK_ZONE}`]);
  return domains;
}
