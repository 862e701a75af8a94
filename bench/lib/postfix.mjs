/**
 * The Postfix peer (Debian's Postfix 3.7, loopback only), set up and measured with the shared
 * scripts in ../shared/peers beside the repository (setup-postfix.sh, bench-postfix.sh; see its README):
 *   127.0.0.1:2526 plain SMTP, 127.0.0.1:2587 submission (STARTTLS + AUTH tester@peer.test /
 *   secret123), every message relayed to [127.0.0.1]:2600 (smtp-sink).
 * The only change made at run time is the "hold" switch below (all intake goes to the hold
 * queue, so intake and delivery can be measured apart); it is undone before Postfix stops.
 */
import { execFile, execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { onCleanup } from './cleanup.mjs';
import { processTreeCpuMs } from './cpu.mjs';

const run = promisify(execFile);
/** ../shared/peers relative to the repository root (bench/lib/ is two levels below it). */
export const PEERS_DIR = process.env.POSTRIDER_BENCH_PEERS ?? fileURLToPath(new URL('../../../shared/peers', import.meta.url));
export const POSTFIX_PLAIN_PORT = 2526;
export const POSTFIX_SUBMISSION_PORT = 2587;
export const POSTFIX_USER = 'tester@peer.test';
export const POSTFIX_PASSWORD = 'secret123';
const SPOOL = '/var/spool/postfix';

function has(cmd) {
  try {
    execFileSync('sh', ['-c', `command -v ${cmd}`], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/** Whether the peer can run here (Postfix and smtp-sink installed, running as root). */
export function postfixAvailable() {
  if (!has('postfix') || !has('smtp-sink') || !has('smtp-source')) return 'Postfix is not installed (see ../shared/peers/README.md)';
  if (process.getuid?.() !== 0) return 'the Postfix peer needs root';
  if (!fs.existsSync(path.join(PEERS_DIR, 'setup-postfix.sh'))) return `${PEERS_DIR}/setup-postfix.sh not found`;
  return null;
}

/**
 * Configures Postfix with setup-postfix.sh in a scratch folder ($PEERS) and starts it.
 * setup-postfix.sh restores master.cf from $PEERS/master.cf.orig; a fresh scratch folder has
 * none, so Debian's pristine master.cf (/usr/share/postfix/master.cf.dist) is copied there.
 */
/**
 * The machine has one Postfix (one spool, one hold setting, smtp-sink's port 2600): a second
 * benchmark that started it meanwhile would stop it, empty its queue or lift its hold under the
 * first one's feet. A lock file with the owner's pid makes the second one stop at once with the
 * reason instead (a lock whose process is gone is taken over).
 */
const PEER_LOCK = path.join(os.tmpdir(), 'postrider-bench-postfix.lock');

function lockPeer() {
  for (let tries = 0; tries < 2; tries++) {
    try {
      fs.writeFileSync(PEER_LOCK, String(process.pid), { flag: 'wx' });
      return () => fs.rmSync(PEER_LOCK, { force: true });
    } catch (err) {
      if (err.code !== 'EEXIST') throw err;
      const owner = Number(fs.readFileSync(PEER_LOCK, 'utf8'));
      if (owner > 0 && isAlive(owner)) throw new Error(`the Postfix peer is in use by another benchmark (pid ${owner}, ${PEER_LOCK}); run one benchmark with a peer at a time`);
      fs.rmSync(PEER_LOCK, { force: true });
    }
  }
  throw new Error(`could not take ${PEER_LOCK}`);
}

function isAlive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return err.code === 'EPERM';
  }
}

export async function startPostfix(log) {
  const unlock = lockPeer();
  try {
    return await startLockedPostfix(log, unlock);
  } catch (err) {
    unlock();
    throw err;
  }
}

async function startLockedPostfix(log, unlock) {
  const scratch = process.env.PEERS ?? fs.mkdtempSync(path.join(os.tmpdir(), 'postrider-bench-peers-'));
  const orig = path.join(scratch, 'master.cf.orig');
  if (!fs.existsSync(orig)) fs.copyFileSync('/usr/share/postfix/master.cf.dist', orig);
  await run('bash', [path.join(PEERS_DIR, 'setup-postfix.sh')], { env: { ...process.env, PEERS: scratch } });
  await run('postfix', ['stop']).catch(() => undefined);
  await run('postfix', ['start']);
  await run('postsuper', ['-d', 'ALL']).catch(() => undefined);
  log?.(`postfix started (scratch ${scratch})`);
  const unregister = onCleanup(() => peer.stop());
  const peer = {
    scratch,
    async stop() {
      unregister();
      await setHold(false).catch(() => undefined);
      await run('postsuper', ['-d', 'ALL']).catch(() => undefined);
      await run('postfix', ['stop']).catch(() => undefined);
      if (!process.env.PEERS) fs.rmSync(scratch, { recursive: true, force: true });
      unlock();
    },
  };
  return peer;
}

/**
 * hold=true: every message accepted by smtpd goes to the hold queue (access action HOLD), so
 * nothing is relayed; hold=false removes the restriction again. Takes effect after a reload.
 */
export async function setHold(hold) {
  if (hold) await run('postconf', ['-e', 'smtpd_data_restrictions = check_client_access static:HOLD']);
  else await run('postconf', ['-X', 'smtpd_data_restrictions']);
  await run('postfix', ['reload']);
  await new Promise((r) => setTimeout(r, 1500)); // old smtpd processes finish their clients and exit
}

/** Messages in Postfix's queues (files under the spool's queue folders). */
export function queued(queues = ['maildrop', 'incoming', 'active', 'deferred', 'hold']) {
  let n = 0;
  const walk = (dir) => {
    let entries;
    try {
      entries = fs.readdirSync(dir, { withFileTypes: true });
    } catch {
      return;
    }
    for (const e of entries) (e.isDirectory() ? walk(path.join(dir, e.name)) : n++);
  };
  for (const q of queues) walk(path.join(SPOOL, q));
  return n;
}

export async function waitQueued(n, queues, timeoutMs) {
  const deadline = Date.now() + timeoutMs;
  while (queued(queues) < n) {
    if (Date.now() > deadline) throw new Error(`postfix: ${queued(queues)} of ${n} messages in ${queues} after ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

export async function deleteQueue() {
  await run('postsuper', ['-d', 'ALL']).catch(() => undefined);
}

/** Held messages go to the deferred queue, then a flush makes the queue manager deliver all now. */
export async function releaseHold() {
  await run('postsuper', ['-H', 'ALL']);
  await run('postqueue', ['-f']);
}

/**
 * smtp-source into the plain port (or another server's `port`); resolves with seconds until every
 * message got its 250. A body of `length` bytes, or with `file` that message as it is (-F: header
 * and body from the file, CRLF after each line); `helo` is the EHLO name (-M); `keep`: each
 * session's messages over one connection (-d), else a connection per message.
 */
export async function smtpSource({ sessions, count, length, file, helo, keep = false, from = 'sender@peer.test', to = 'rcpt@example.test', port = POSTFIX_PLAIN_PORT }) {
  const body = file ? ['-F', file] : ['-l', String(length)];
  const name = helo ? ['-M', helo] : [];
  // -d: a session sends its next message over the same connection instead of a new one.
  const flags = [...body, ...name, ...(keep ? ['-d'] : [])];
  const t0 = performance.now();
  await run('smtp-source', ['-s', String(sessions), '-m', String(count), ...flags, '-f', from, '-t', to, `127.0.0.1:${port}`], { maxBuffer: 1 << 24 });
  return (performance.now() - t0) / 1000;
}

/** CPU ms used so far by every Postfix process: the master and the daemons it forks (bench/lib/cpu.mjs). */
export function postfixCpuMs() {
  try {
    return processTreeCpuMs(Number(fs.readFileSync(path.join(SPOOL, 'pid/master.pid'), 'utf8').trim()));
  } catch {
    return null;
  }
}

/**
 * The shared bench-postfix.sh: smtp-source intake while Postfix relays to its own smtp-sink on
 * :2600 (nothing else may listen there meanwhile). Returns its line and the parsed rates.
 */
export async function benchPostfix({ sessions, count, length, scratch }) {
  const { stdout } = await run('bash', [path.join(PEERS_DIR, 'bench-postfix.sh'), String(sessions), String(count), String(length)], {
    env: { ...process.env, PEERS: scratch },
    maxBuffer: 1 << 24,
  });
  const line = stdout.trim().split('\n').pop();
  const m = /ingest=([\d.]+)s \((\d+) msg\/s\)\s+e2e=([\d.]+)s \((\d+) msg\/s\) sink_got=(\d+)/.exec(line);
  if (!m) throw new Error(`bench-postfix.sh: unexpected output: ${stdout}`);
  return { line, ingestS: +m[1], ingestRate: count / +m[1], e2eS: +m[3], e2eRate: count / +m[3], got: +m[5] };
}

/** Where setup-opendkim.sh keeps OpenDKIM's configuration, key and pid file. */
const OPENDKIM_DIR = '/etc/postfix/opendkim-peer';

/** Why the OpenDKIM milter cannot run here, or null (apt-get install opendkim opendkim-tools). */
export function opendkimAvailable() {
  if (!has('opendkim') || !has('opendkim-genkey')) return 'OpenDKIM is not installed (apt-get install opendkim opendkim-tools)';
  if (!fs.existsSync(path.join(PEERS_DIR, 'setup-opendkim.sh'))) return `${PEERS_DIR}/setup-opendkim.sh not found`;
  return null;
}

/**
 * The shared setup-opendkim.sh: on starts Debian's OpenDKIM on 127.0.0.1:8891 and makes it
 * smtpd's milter (every message from peer.test signed, RSA-2048 relaxed/relaxed, before the
 * 250); off unwires and stops it. While on, a cleanup turns it off if the run is interrupted.
 */
let opendkimCleanup = null;
export async function setOpendkim(on) {
  await run('bash', [path.join(PEERS_DIR, 'setup-opendkim.sh'), on ? 'on' : 'off']);
  opendkimCleanup?.();
  opendkimCleanup = on ? onCleanup(() => setOpendkim(false)) : null;
  await new Promise((r) => setTimeout(r, 1500)); // old smtpd processes (without the milter) finish and exit
}

/** CPU ms used so far by the OpenDKIM daemon (all its threads, and any child it reaped); null when it does not run. */
export function opendkimCpuMs() {
  try {
    return processTreeCpuMs(Number(fs.readFileSync(path.join(OPENDKIM_DIR, 'opendkim.pid'), 'utf8').trim()));
  } catch {
    return null;
  }
}
