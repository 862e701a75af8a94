/**
 * The cluster test of issue 32: three `postrider serve` processes (A, B, C), each with its own
 * data folder, on one PostgreSQL schema of a PostgreSQL of the test's own (one it may crash),
 * delivering to one sink MX at a low delivery.rate. HTTP sends (round robin over the three HTTP
 * ports, as a load balancer without health checks spreads them) and SMTP submissions (over the
 * three SMTP ports) run as an open-loop load while
 *  - node B is killed with SIGKILL and, once A and C have acknowledged more sends without it,
 *    restarted on the same data folder;
 *  - PostgreSQL is crashed (pg_ctl -m immediate) for a few seconds and started again.
 * Between the two, against the live cluster: an Idempotency-Key used on A and replayed on B
 * returns A's answer; a suppression added through A blocks a send through C at once.
 *
 * Checked at the end, and printed as a short report:
 *  - every acknowledged send (HTTP 200, SMTP 250) reached the sink, matched by the unique tag in
 *    its subject; copies beyond the first are counted, and may only be of messages that were in
 *    flight at the killed node (see RECORD_LAG_MS);
 *  - no send begun while PostgreSQL was down was acknowledged: those got 503 store_unavailable
 *    or SMTP 451 4.3.0, and every node said not ready; no 503 or 451 before the crash or after
 *    the nodes were ready again, no other refusal, no hang, no lost answer but B's;
 *  - every node is ready again by itself within seconds of PostgreSQL's return (the same
 *    processes), and each acknowledges sends again;
 *  - no 1-second window at the sink holds more than delivery.rate messages (the shared pacer),
 *    less the pacer's margin for the receiver's reading (see the assertion);
 *  - an Idempotency-Key used on A and replayed on B answers A's answer, and the message goes
 *    out once; a suppression added through A refuses a send through C at once;
 *  - activity and statistics read through A, B and C agree, and with the sink (what the cluster
 *    accepted is what the sink got, each message counted delivered once).
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import readline from 'node:readline';
import { fileURLToPath } from 'node:url';
import nodemailer from 'nodemailer';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PACER_MARGIN_MS } from '../../src/queue/rate-limiter.js';
import { ChildDaemon } from '../support/child-daemon.js';
import { clusterNodeEnv } from '../support/cluster-env.js';
import type { ApiOptions, ApiResponse } from '../support/daemon.js';
import { routeTo } from '../support/delivery-rig.js';
import { startDnsServer, type TestDns } from '../support/dns-server.js';
import { startPostgres, type PostgresCluster } from '../support/postgres.js';
import { setupSender, type Sender } from '../support/sending.js';
import { waitFor } from '../support/wait.js';

const RCPT_DOMAIN = 'cluster-sink.net';
/** How late the sink's event loop may read an arrival on this loaded machine (see SINK_SCRIPT). */
const SINK_READING_ERROR_MS = 27;
const SINK_ADDRESS = '127.0.132.2';
const SCHEMA = 'cluster_test';
/** delivery.rate of every node: low, so that the shared pacer, not the machine, sets the pace. */
const RATE = 20;
/** delivery.perDomainConcurrency: sessions to the sink, for the whole cluster (shared slots). */
const SITE_CONCURRENCY = 3;
/**
 * Which copies beyond the first may reach the sink: only those of messages in flight at the
 * node that was killed. A node records a delivery after the sink's 250 and before its lease goes
 * (a group commit), so a SIGKILL repeats exactly the messages it had delivered without having
 * committed their outcome yet; they go out again once its leases come back (at its restart).
 * Their first copies therefore reached the sink shortly before the kill: within the outcome
 * commit's lag behind the 250, a few milliseconds on an idle machine, measured up to 2.2 s on
 * this 2-core machine with its CPU saturated (13 duplicates at delivery.rate 20), hence
 * RECORD_LAG_MS. The bound on their number is what the sink received in that span before the
 * kill. The site's session slot is free again when the SMTP part ends, before that commit, so
 * delivery.perDomainConcurrency does not bound them. A PostgreSQL crash duplicates nothing: a
 * node keeps an outcome it could not record and records it once the database is back.
 */
const RECORD_LAG_MS = 3_000;
/** Acknowledged sends before B is killed, before PostgreSQL is crashed, and in all. */
const ACKED_BEFORE_KILL = 50;
const ACKED_BEFORE_CRASH = 140;
const ACKED_IN_ALL = 280;
/** Sends started per second, over all nodes (a bit above RATE, so the queue grows under load). */
const LOAD_PER_SECOND = 28;
/** Most sends waiting for an answer at once. */
const MAX_IN_FLIGHT = 16;
/** An answer slower than this is a hang. */
const SEND_TIMEOUT_MS = 20_000;

type Via = 'http' | 'smtp';
/** acked: 200 / 250; unavailable: 503 store_unavailable or store_timeout / 451 4.3.0; refused: any other answer; no_answer: connection refused or cut. */
type Outcome = 'acked' | 'unavailable' | 'refused' | 'no_answer' | 'timeout';

interface Attempt {
  tag: string;
  via: Via;
  node: number;
  startedAt: number;
  endedAt: number;
  outcome: Outcome;
  /** HTTP status and code, or the SMTP reply, or the error. */
  detail: string;
  /** The message id the 200 or 250 named. */
  messageId?: string;
}

let pg: PostgresCluster;
let dns: TestDns;
let sink: Sink;
let s: Sender;
let key: string;
const nodes: ChildDaemon[] = [];
const names = ['A', 'B', 'C'];

/**
 * The sink MX, in a process of its own (smtp-server, as support/mx-server.ts, accepting every
 * message), niced up where allowed. Its clock is the measure of the rate check, and a clock read
 * in this test process, which runs the load, lags by tens of milliseconds at times on this
 * 2-core machine (a stall bunches the arrivals it delays): more than the pacer's margin
 * (PACER_MARGIN_MS, 12 ms), which is all a receiver may be off by. Each message is reported as
 * one line: its tag and the time DATA ended (epoch ms), the moment the pacer's slots stand for.
 */
const SINK_SCRIPT = `
const { SMTPServer } = require('smtp-server');
const { performance, monitorEventLoopDelay } = require('node:perf_hooks');
const lag = monitorEventLoopDelay({ resolution: 5 });
lag.enable();
const say = (o) => process.stdout.write(JSON.stringify(o) + '\\n');
const server = new SMTPServer({
  name: 'sink', logger: false, authOptional: true, disabledCommands: ['AUTH', 'STARTTLS'], hideSTARTTLS: true,
  onData(stream, _session, cb) {
    const chunks = [];
    stream.on('data', (c) => chunks.push(c));
    stream.on('end', () => {
      const at = performance.timeOrigin + performance.now();
      const m = /^Subject: cluster (\\S+)\\r?$/m.exec(Buffer.concat(chunks).toString('latin1'));
      say({ tag: m ? m[1] : null, at });
      cb(null, 'Ok');
    });
  },
});
server.on('error', () => undefined);
server.listen(0, process.argv[1], () => say({ port: server.server.address().port }));
process.stdin.on('data', () => say({ lag: { max: lag.max / 1e6, p99: lag.percentile(99) / 1e6 } }));
`;

interface Sink {
  port: number;
  /** Messages received. */
  received: number;
  /** Copies received per tag ('(untagged)' for a message without one). */
  copies: Map<string, number>;
  /** When each message's DATA ended, epoch ms. */
  arrivals: number[];
  /** The arrivals of each tag, epoch ms. */
  arrivalsOf: Map<string, number[]>;
  /** The sink's own event loop delay, ms. */
  lag(): Promise<{ max: number; p99: number }>;
  close(): Promise<void>;
}

async function startSink(address: string): Promise<Sink> {
  const root = fileURLToPath(new URL('../../', import.meta.url));
  const child = spawn('nice', ['-n', '-5', process.execPath, '-e', SINK_SCRIPT, address], { cwd: root, stdio: ['pipe', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (d) => (stderr += d));
  const lags: Array<(l: { max: number; p99: number }) => void> = [];
  let port = 0;
  const sink: Sink = {
    get port() {
      return port;
    },
    received: 0,
    copies: new Map(),
    arrivals: [],
    arrivalsOf: new Map(),
    lag: () => new Promise((resolve) => (lags.push(resolve), child.stdin.write('lag\n'))),
    close: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
    },
  };
  readline.createInterface({ input: child.stdout }).on('line', (line) => {
    const m = JSON.parse(line) as { port?: number; tag?: string | null; at?: number; lag?: { max: number; p99: number } };
    if (m.port) port = m.port;
    else if (m.lag) lags.shift()?.(m.lag);
    else {
      sink.received++;
      sink.arrivals.push(m.at!);
      const tag = m.tag ?? '(untagged)';
      sink.copies.set(tag, (sink.copies.get(tag) ?? 0) + 1);
      sink.arrivalsOf.set(tag, [...(sink.arrivalsOf.get(tag) ?? []), m.at!]);
    }
  });
  await waitFor(() => port, { what: 'the sink MX to listen', failFast: () => child.exitCode !== null && `the sink exited: ${stderr}` });
  return sink;
}

beforeAll(async () => {
  pg = await startPostgres();
  dns = await startDnsServer();
  sink = await startSink(SINK_ADDRESS);
  routeTo(dns, RCPT_DOMAIN, SINK_ADDRESS);
  const env = {
    ...clusterNodeEnv({ pgUrl: pg.url, schema: SCHEMA, dnsAddress: dns.address, sinkPort: sink.port }),
    POSTRIDER_DELIVERY_RATE: String(RATE),
    POSTRIDER_DELIVERY_PER_DOMAIN_CONCURRENCY: String(SITE_CONCURRENCY),
    POSTRIDER_API_RATE_LIMIT: '100000',
  };
  // Six ports held at once, so that no two listeners of the nodes are given the same one.
  const ports = await distinctPorts(6);
  for (let i = 0; i < 3; i++) {
    const node = new ChildDaemon({ env, readyTimeoutMs: 60_000 });
    [node.httpPort, node.smtpPort] = [ports[2 * i], ports[2 * i + 1]];
    nodes.push(node);
  }
  // A alone first: it makes the account and writes the initial key into its data folder.
  await nodes[0].start();
  key = nodes[0].apiKey;
  await Promise.all(nodes.slice(1).map((n) => n.start()));
  s = await setupSender(nodes[0], dns);
}, 180_000);

afterAll(async () => {
  for (const n of nodes) await n.close().catch(() => undefined);
  await sink?.close();
  await dns?.close();
  await pg?.stop();
});

/** n free ports on 127.0.0.1, all different: each is held until all are found. */
async function distinctPorts(n: number): Promise<number[]> {
  const servers = await Promise.all(
    Array.from({ length: n }, () => new Promise<net.Server>((resolve, reject) => {
      const srv = net.createServer();
      srv.on('error', reject);
      srv.listen(0, '127.0.0.1', () => resolve(srv));
    })),
  );
  const ports = servers.map((srv) => (srv.address() as net.AddressInfo).port);
  await Promise.all(servers.map((srv) => new Promise((resolve) => srv.close(resolve))));
  return ports;
}

/** The API of node i with the account key (only A's data folder holds it). */
function api(i: number, method: string, urlPath: string, o: ApiOptions = {}): Promise<ApiResponse> {
  return nodes[i].api(method, urlPath, { key, ...o });
}

/** What GET /ready of node i answered last: its status (0: no answer) and the components not ready. */
const lastReady: Array<{ status: number; notReady: string[] }> = [];

async function ready(i: number): Promise<number> {
  try {
    const res = await fetch(`${nodes[i].url}/ready`, { signal: AbortSignal.timeout(3000) });
    const body = (await res.json().catch(() => ({}))) as { notReady?: string[] };
    lastReady[i] = { status: res.status, notReady: body.notReady ?? [] };
    return res.status;
  } catch {
    lastReady[i] = { status: 0, notReady: [] };
    return 0;
  }
}

const sendBody = (tag: string, to: string) => ({ from: { email: `app@${s.domain}` }, to: [{ email: to }], subject: `cluster ${tag}`, text: `message ${tag}` });

async function httpSend(node: number, tag: string): Promise<[Outcome, string, string?]> {
  try {
    const res = await fetch(`${nodes[node].url}/send/transactional`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'x-service-channel-id': s.channelId },
      body: JSON.stringify(sendBody(tag, `${tag}@${RCPT_DOMAIN}`)),
      signal: AbortSignal.timeout(SEND_TIMEOUT_MS),
    });
    const body = (await res.json().catch(() => null)) as { code?: string; messageId?: string } | null;
    if (res.status === 200 && body?.messageId) return ['acked', '200', body.messageId];
    // store_timeout: a call that PostgreSQL's crash left unanswered past store.requestTimeoutMs
    // (a slow restart on a loaded host); not acknowledged either, and counted as such.
    if (res.status === 503 && (body?.code === 'store_unavailable' || body?.code === 'store_timeout')) return ['unavailable', `503 ${body.code}`];
    return ['refused', `${res.status} ${body?.code ?? ''}`];
  } catch (err) {
    const name = (err as Error).name;
    return name === 'TimeoutError' || name === 'AbortError' ? ['timeout', name] : ['no_answer', String((err as Error & { cause?: Error }).cause?.message ?? err)];
  }
}

async function smtpSend(node: number, tag: string): Promise<[Outcome, string, string?]> {
  const transport = nodemailer.createTransport({
    host: '127.0.0.1',
    port: nodes[node].smtpPort,
    secure: false,
    ignoreTLS: true, // plain AUTH is allowed from loopback; spares the CPU of a handshake per send
    auth: { user: s.channelId, pass: key },
    connectionTimeout: SEND_TIMEOUT_MS,
    greetingTimeout: SEND_TIMEOUT_MS,
    socketTimeout: SEND_TIMEOUT_MS,
  });
  try {
    const info = await transport.sendMail({ from: `app@${s.domain}`, to: `${tag}@${RCPT_DOMAIN}`, subject: `cluster ${tag}`, text: `message ${tag}` });
    return /^250 /.test(info.response) ? ['acked', info.response, /queued as <?([0-9a-f-]{36})/.exec(info.response)?.[1]] : ['refused', info.response];
  } catch (err) {
    const e = err as Error & { responseCode?: number; response?: string; code?: string };
    // store_unavailable's reply; an internal error is 451 4.3.0 too, with other words.
    if (e.responseCode === 451 && /^451 4\.3\.0 The store (cannot be reached|did not answer)/.test(e.response ?? '')) return ['unavailable', e.response!];
    if (e.responseCode) return ['refused', e.response ?? String(e.responseCode)];
    return e.code === 'ETIMEDOUT' ? ['timeout', e.message] : ['no_answer', `${e.code ?? ''} ${e.message}`];
  } finally {
    transport.close();
  }
}

/**
 * Open-loop load: LOAD_PER_SECOND sends a second, each with a new tag, the i-th to node i % 3,
 * every fifth over SMTP, at most MAX_IN_FLIGHT waiting at once; runs until stop().
 */
class Load {
  readonly attempts: Attempt[] = [];
  private stopped = false;
  private inFlight = new Set<Promise<void>>();
  private readonly done: Promise<void>;

  constructor() {
    this.done = this.run();
  }

  acked(filter: (a: Attempt) => boolean = () => true): number {
    return this.attempts.filter((a) => a.outcome === 'acked' && filter(a)).length;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.done;
  }

  private async run(): Promise<void> {
    const t0 = performance.now();
    for (let i = 0; !this.stopped; i++) {
      const at = t0 + (i * 1000) / LOAD_PER_SECOND;
      if (at > performance.now()) await new Promise((r) => setTimeout(r, at - performance.now()));
      while (this.inFlight.size >= MAX_IN_FLIGHT) await Promise.race(this.inFlight);
      if (this.stopped) break;
      const p = this.one(i).finally(() => this.inFlight.delete(p));
      this.inFlight.add(p);
    }
    await Promise.all(this.inFlight);
  }

  private async one(i: number): Promise<void> {
    const tag = `m${i}`;
    const node = i % 3;
    const via: Via = i % 5 === 4 ? 'smtp' : 'http';
    const startedAt = performance.now();
    const [outcome, detail, messageId] = via === 'http' ? await httpSend(node, tag) : await smtpSend(node, tag);
    this.attempts.push({ tag, via, node, startedAt, endedAt: performance.now(), outcome, detail, messageId });
  }
}

/** What the store and the nodes' logs say about messages that did not arrive (for the failure message). */
async function diagnose(lost: Attempt[], at: (t: number) => string): Promise<string> {
  const sql = postgres(pg.url, { max: 1, onnotice: () => undefined });
  const out: string[] = [];
  try {
    for (const a of lost.slice(0, 5)) {
      out.push(`${a.tag} via ${a.via} to ${names[a.node] ?? '?'}, ${at(a.startedAt)}-${at(a.endedAt)}: ${a.detail} (${a.messageId})`);
      if (!a.messageId) continue;
      const id = a.messageId;
      const rows = {
        message: await sql.unsafe(`SELECT status, open_jobs, created_ms FROM ${SCHEMA}.messages WHERE id = $1`, [id]),
        unfinished: await sql.unsafe(`SELECT committed_ms, domain, failures FROM ${SCHEMA}.unfinished_messages WHERE message_id = $1`, [id]),
        jobs: await sql.unsafe(`SELECT state, due_at, lease_until, lease_owner, lease_generation, doc FROM ${SCHEMA}.jobs WHERE message_id = $1`, [id]),
        finished: await sql.unsafe(`SELECT doc FROM ${SCHEMA}.finished_jobs WHERE message_id = $1`, [id]),
      };
      out.push(`  now ${Date.now()} ${JSON.stringify(rows)}`);
      const details = await api(0, 'GET', `/activity/messages/${id}`).catch((e: Error) => ({ status: 0, body: e.message }));
      out.push(`  GET /activity/messages/${id}: ${details.status} ${JSON.stringify(details.body?.events ?? details.body).slice(0, 1500)}`);
    }
  } finally {
    await sql.end({ timeout: 5 });
  }
  const ids = lost.flatMap((a) => (a.messageId ? [a.messageId] : []));
  for (const [i, n] of nodes.entries()) {
    const nodeId = fs.readFileSync(path.join(n.dataDir, 'node-id'), 'utf8').trim();
    const lines = n.logRecords()
      .filter((r) => (r.level as number) >= 50 || ids.some((id) => JSON.stringify(r).includes(id)))
      .map((r) => `${r.time as string} ${r.msg} ${(r.err as { message?: string } | undefined)?.message ?? ''} ${(r.messageId as string | undefined) ?? ''}`);
    out.push(`log of ${names[i]} (node ${nodeId}), errors and lines naming the lost:\n${lines.join('\n').slice(-6000)}`);
  }
  return out.join('\n');
}

/** Each node's warnings and errors, one line per message text: how many, first and last time. */
function logSummary(at: (t: number) => string): string {
  const out: string[] = [];
  for (const [i, n] of nodes.entries()) {
    const byMsg = new Map<string, { count: number; first: string; last: string; err: string }>();
    for (const r of n.logRecords()) {
      if ((r.level as number) < 40) continue;
      const err = (r.err as { message?: string } | undefined)?.message;
      const e = byMsg.get(r.msg) ?? { count: 0, first: r.time as string, last: '', err: (r.level as number) >= 50 && err ? ` (${err.slice(0, 120)})` : '' };
      e.count++;
      e.last = r.time as string;
      byMsg.set(r.msg, e);
    }
    const epoch = (iso: string) => at(Date.parse(iso) - performance.timeOrigin);
    out.push(`  log of ${names[i]}: ${[...byMsg].map(([msg, e]) => `${e.count}× ${epoch(e.first)}-${epoch(e.last)} "${msg}"${e.err}`).join('; ') || 'nothing'}`);
  }
  return out.join('\n');
}

/** The shortest time n consecutive arrivals took (Infinity for fewer arrivals). */
function shortestSpan(times: number[], n: number): number {
  const sorted = [...times].sort((a, b) => a - b);
  let min = Infinity;
  for (let i = 0; i + n - 1 < sorted.length; i++) min = Math.min(min, sorted[i + n - 1] - sorted[i]);
  return min;
}

/** The most arrivals in any window [t, t + windowMs), and where the first such window starts. */
function busiestSecond(times: number[], windowMs = 1000): { count: number; from: number } {
  const sorted = [...times].sort((a, b) => a - b);
  let best = { count: 0, from: 0 };
  for (let lo = 0, hi = 0; lo < sorted.length; lo++) {
    while (hi < sorted.length && sorted[hi] < sorted[lo] + windowMs) hi++;
    if (hi - lo > best.count) best = { count: hi - lo, from: sorted[lo] };
  }
  return best;
}

function tally(attempts: Attempt[]): string {
  const counts = new Map<string, number>();
  for (const a of attempts) counts.set(`${a.via} ${a.outcome}`, (counts.get(`${a.via} ${a.outcome}`) ?? 0) + 1);
  return [...counts].sort().map(([k, v]) => `${k}=${v}`).join(', ');
}

describe('three nodes on one PostgreSQL', () => {
  it('loses no acknowledged message through a SIGKILL of a node and a crash of PostgreSQL, and keeps one service', async () => {
    const lag = monitorEventLoopDelay({ resolution: 5 });
    lag.enable();
    const load = new Load();
    const t0 = performance.now();
    const at = (t: number) => `${((t - t0) / 1000).toFixed(1)}s`;
    const stopped = { load: false };
    try {
      // ---- SIGKILL of node B mid-load, the others keep going, then B again on its folder ----
      await waitFor(() => load.acked() >= ACKED_BEFORE_KILL, { what: `${ACKED_BEFORE_KILL} acknowledged sends`, timeout: 30_000 });
      const pidBefore = nodes[1].pid;
      const killAt = performance.now();
      await nodes[1].kill9();
      const killedAt = performance.now();
      await waitFor(() => load.acked((a) => a.node !== 1 && a.startedAt > killedAt) >= 20, { what: 'A and C to acknowledge 20 sends while B is dead', timeout: 30_000 });
      const restartAt = performance.now();
      await nodes[1].start();
      const backAt = performance.now();
      expect(nodes[1].pid).not.toBe(pidBefore);
      await waitFor(() => load.acked((a) => a.node === 1 && a.startedAt > backAt) >= 3, { what: 'B to acknowledge sends after its restart', timeout: 30_000 });

      // ---- one service: an idempotency key across nodes, a suppression across nodes ----
      const idem = { headers: { 'x-service-channel-id': s.channelId, 'idempotency-key': 'cluster-idem-1' }, body: sendBody('idem', `idem@${RCPT_DOMAIN}`) };
      const first = await api(0, 'POST', '/send/transactional', idem);
      expect(first.status, JSON.stringify(first.body)).toBe(200);
      const replay = await api(1, 'POST', '/send/transactional', idem);
      expect(replay.status, JSON.stringify(replay.body)).toBe(200);
      expect(replay.body).toEqual(first.body);
      const blocked = `blocked@${RCPT_DOMAIN}`;
      const added = await api(0, 'POST', '/suppressions', { body: { channelId: s.channelId, mailType: 'transactional', emails: [blocked] } });
      expect(added.status, JSON.stringify(added.body)).toBe(200);
      const refused = await api(2, 'POST', '/send/transactional', { headers: { 'x-service-channel-id': s.channelId }, body: sendBody('blocked', blocked) });
      expect(refused.status, JSON.stringify(refused.body)).toBe(422);
      expect(refused.body.code).toBe('recipients_suppressed');

      // ---- PostgreSQL crashed mid-load, and started again ----
      await waitFor(() => load.acked() >= ACKED_BEFORE_CRASH, { what: `${ACKED_BEFORE_CRASH} acknowledged sends`, timeout: 30_000 });
      const pids = nodes.map((n) => n.pid);
      const crashAt = performance.now();
      await pg.crash();
      const downAt = performance.now();
      const duringOutage = (a: Attempt) => a.startedAt >= downAt;
      await waitFor(
        async () => {
          const states = await Promise.all([0, 1, 2].map(ready));
          const http = load.attempts.filter((a) => duringOutage(a) && a.via === 'http' && a.outcome === 'unavailable').length;
          const smtp = load.attempts.filter((a) => duringOutage(a) && a.via === 'smtp' && a.outcome === 'unavailable').length;
          if (!(states.every((st) => st === 503) && http >= 5 && smtp >= 2 && performance.now() - downAt >= 3000)) throw new Error(JSON.stringify({ states, http, smtp }));
          return true;
        },
        { what: 'every node not ready, and sends answered 503 and 451, while PostgreSQL is down', timeout: 30_000 },
      );
      const upAt = performance.now();
      await pg.start();
      const pgBackAt = performance.now();
      // When each node is ready again, and what it was waiting for until then.
      const readyAgain: number[] = [];
      const waitedFor = names.map(() => new Set<string>());
      await waitFor(
        async () => {
          await Promise.all(
            [0, 1, 2].map(async (i) => {
              if (readyAgain[i] !== undefined) return;
              if ((await ready(i)) === 200) readyAgain[i] = performance.now();
              else lastReady[i]?.notReady.forEach((c) => waitedFor[i].add(c));
            }),
          );
          if (readyAgain.filter((x) => x !== undefined).length < 3) throw new Error(JSON.stringify(lastReady));
          return true;
        },
        { what: 'GET /ready 200 on every node after PostgreSQL is back', timeout: 30_000 },
      );
      const readyAt = performance.now();
      // A pool tries to connect at least once a second (database-unavailable.ts,
      // RECONNECT_BACKOFF_MAX_S) and GET /ready reads the store's probe, run every 2 s.
      expect(readyAt - pgBackAt).toBeLessThan(5_000);
      expect(nodes.map((n) => n.pid)).toEqual(pids);
      expect(nodes.every((n) => n.alive)).toBe(true);
      await waitFor(() => [0, 1, 2].every((i) => load.acked((a) => a.node === i && a.startedAt > readyAt) >= 2), {
        what: 'every node to acknowledge sends again after the outage',
        timeout: 30_000,
      });

      await waitFor(() => load.acked() >= ACKED_IN_ALL, { what: `${ACKED_IN_ALL} acknowledged sends`, timeout: 60_000 });
      await load.stop();
      stopped.load = true;
      const loadEnd = performance.now();

      // ---- what the sink got ----
      const acked = load.attempts.filter((a) => a.outcome === 'acked').map((a) => a.tag);
      acked.push('idem');
      let lastMissing: string[] = [];
      await waitFor(
        () => {
          const missing = acked.filter((tag) => !sink.copies.has(tag));
          if (missing.length > 0) {
            lastMissing = missing;
            throw new Error(`${missing.length} missing: ${missing.slice(0, 10).join(' ')}`);
          }
          return true;
        },
        {
          what: 'every acknowledged message at the sink',
          timeout: 90_000,
        },
      ).catch(async (err: Error) => {
        const lost = load.attempts.filter((a) => lastMissing.includes(a.tag));
        throw new Error(`${err.message}\n${await diagnose(lost, at)}`);
      });
      // Every message the cluster took is delivered (also those whose answer was lost), none is left queued.
      let stillQueued: string[] = [];
      const queued = await waitFor(
        async () => {
          const res = await api(0, 'GET', `/activity/messages?channelId=${s.channelId}&status=queued&limit=5`);
          stillQueued = res.status === 200 ? (res.body.results as Array<{ id: string }>).map((m) => m.id) : [];
          return res.status === 200 && res.body.totalCount === 0 ? res : null;
        },
        { what: 'an empty queue', timeout: 60_000 },
      ).catch(async (err: Error) => {
        const left = stillQueued.map((id) => load.attempts.find((a) => a.messageId === id) ?? { tag: '(answer lost)', via: 'http' as const, node: -1, startedAt: 0, endedAt: 0, outcome: 'no_answer' as const, detail: '', messageId: id });
        throw new Error(`${err.message}: ${stillQueued.join(' ')}\n${await diagnose(left, at)}`);
      });
      expect(queued.body.results).toEqual([]);
      const deliveredAt = performance.now();

      // ---- activity and statistics agree through A, B and C ----
      const views = await waitFor(
        async () => {
          const seen = await Promise.all(
            [0, 1, 2].map(async (i) => {
              const list = await api(i, 'GET', `/activity/messages?channelId=${s.channelId}&limit=1`);
              const stats = await api(i, 'GET', `/statistics/totals?channelId=${s.channelId}`);
              return { totalCount: list.body.totalCount as number, stats: stats.body as { transactional: { sent: number; delivered: number } } };
            }),
          );
          const same = seen.every((v) => JSON.stringify(v) === JSON.stringify(seen[0]));
          const settled = seen[0].stats.transactional.delivered === seen[0].totalCount;
          if (!same || !settled) throw new Error(JSON.stringify(seen));
          return seen;
        },
        { what: 'the same activity and statistics through A, B and C, every message delivered', timeout: 30_000 },
      );
      const totalCount = views[0].totalCount;

      // ---- the numbers ----
      const during = load.attempts.filter((a) => a.startedAt >= downAt && a.startedAt < upAt);
      const ackedDuringOutage = during.filter((a) => a.outcome === 'acked');
      const whileBDead = load.attempts.filter((a) => a.startedAt >= killedAt && a.startedAt < backAt);
      const copies = [...sink.copies.values()];
      const duplicates = copies.reduce((n, c) => n + c - 1, 0);
      // The arrivals of the duplicated messages, on this process's clock.
      const repeated = [...sink.arrivalsOf].filter(([, times]) => times.length > 1).map(([tag, times]) => ({ tag, times: times.map((x) => x - performance.timeOrigin).sort((a, b) => a - b) }));
      const inFlightSpan = (x: number) => x >= killAt - RECORD_LAG_MS && x <= killedAt;
      const dupBound = sink.arrivals.map((x) => x - performance.timeOrigin).filter(inFlightSpan).length;
      const notAcked = [...sink.copies.keys()].filter((tag) => tag !== 'idem' && !acked.includes(tag));
      const notAckedAttempts = load.attempts.filter((a) => notAcked.includes(a.tag));
      const busiest = busiestSecond(sink.arrivals);
      const shortest = shortestSpan(sink.arrivals, RATE + 1);
      const outside = load.attempts.filter((a) => a.outcome === 'unavailable' && (a.endedAt < crashAt || a.startedAt > readyAt));
      const sinkLag = await sink.lag();
      const timeouts = load.attempts.filter((a) => a.outcome === 'timeout');
      const report = [
        `cluster test: 3 nodes, delivery.rate ${RATE}, ${load.attempts.length} sends (${tally(load.attempts)})`,
        `  acknowledged ${acked.length} (A ${load.acked((a) => a.node === 0)}, B ${load.acked((a) => a.node === 1)}, C ${load.acked((a) => a.node === 2)}, + idempotent 1)`,
        `  B killed at ${at(killedAt)}, restarted ${at(restartAt)}, ready ${at(backAt)}: ${whileBDead.length} sends meanwhile (${tally(whileBDead)})`,
        `  PostgreSQL crashed at ${at(crashAt)}, down ${at(downAt)}-${at(upAt)}, accepting again ${at(pgBackAt)}, ready again: ${names.map((n, i) => `${n} ${at(readyAgain[i])} (${[...waitedFor[i]].join(' ') || '-'})`).join(', ')}`,
        `    sends begun while down: ${during.length} (${tally(during)}); acknowledged: ${ackedDuringOutage.length}`,
        `  load ended ${at(loadEnd)}, all delivered ${at(deliveredAt)}`,
        `  sink: ${sink.received} received, ${sink.copies.size} distinct, ${duplicates} duplicates (bound ${dupBound}: arrivals in the ${RECORD_LAG_MS / 1000} s before the kill), ${notAcked.length} delivered without an acknowledgement (${tally(notAckedAttempts) || 'none'}), busiest 1 s window ${busiest.count} from ${at(busiest.from - performance.timeOrigin)}, shortest span of ${RATE + 1} arrivals ${shortest.toFixed(0)} ms (rate ${RATE})`,
        `  event loop delay, max/p99: sink ${sinkLag.max.toFixed(1)}/${sinkLag.p99.toFixed(1)} ms, this process ${(lag.max / 1e6).toFixed(1)}/${(lag.percentile(99) / 1e6).toFixed(1)} ms`,
        `  activity totalCount ${totalCount} on A, B and C; statistics ${JSON.stringify(views[0].stats.transactional)}`,
        `  duplicated (arrivals): ${repeated.map((r) => `${r.tag} ${r.times.map(at).join(' ')}`).join(', ') || 'none'}`,
        `  no answer: ${names.map((n, i) => `${n} ${load.attempts.filter((a) => a.node === i && a.outcome === 'no_answer').length}`).join(', ')}`,
        `  unavailable outside the outage: ${tally(outside)} ${outside.slice(0, 6).map((a) => `${a.tag} ${names[a.node]} ${at(a.startedAt)}-${at(a.endedAt)}`).join(', ')}`,
        `  refused answers: ${[...new Set(load.attempts.filter((a) => a.outcome === 'refused').map((a) => a.detail))].join('; ') || 'none'}`,
      ];
      console.log(report.join('\n'));
      console.log(logSummary(at));

      expect(ackedDuringOutage.map((a) => `${a.tag} via ${a.via} to ${names[a.node]}: ${a.detail}`)).toEqual([]);
      expect(during.filter((a) => a.outcome === 'unavailable').length).toBeGreaterThan(0);
      expect(timeouts.map((a) => `${a.tag} via ${a.via} to ${names[a.node]} at ${at(a.startedAt)}`)).toEqual([]);
      // 503 and 451 only from the crash until every node was ready again.
      expect(outside.map((a) => `${a.tag} via ${a.via} to ${names[a.node]} ${at(a.startedAt)}-${at(a.endedAt)}: ${a.detail}`)).toEqual([]);
      // No answer only from B, from its kill until it was back.
      const unanswered = load.attempts.filter((a) => a.outcome === 'no_answer' && !(a.node === 1 && a.endedAt >= killAt && a.startedAt < backAt));
      expect(unanswered.map((a) => `${a.tag} via ${a.via} to ${names[a.node]} ${at(a.startedAt)}-${at(a.endedAt)}: ${a.detail}`)).toEqual([]);
      expect(load.attempts.filter((a) => a.outcome === 'refused').map((a) => `${a.tag} via ${a.via} to ${names[a.node]}: ${a.detail}`)).toEqual([]);
      expect(sink.copies.has('(untagged)')).toBe(false);
      expect(sink.copies.has('blocked')).toBe(false);
      expect(sink.copies.get('idem')).toBe(1);
      // Every repeated message was in flight at B when it was killed: its first copy came in the
      // span before the kill, every other one after it.
      expect(repeated.filter((r) => !inFlightSpan(r.times[0]) || r.times.slice(1).some((x) => x <= killedAt)).map((r) => `${r.tag} at ${r.times.map(at).join(' ')}`)).toEqual([]);
      expect(duplicates).toBeLessThanOrEqual(dupBound);
      // No second at the sink over the rate: the pacer spaces slots so that any rate + 1 of them
      // span a second plus its margin (PACER_MARGIN_MS, less a 5 ms tolerance), the slack for how
      // much later than its slot a message may reach its receiver. Measured at the sink, the
      // span may lose that slack and the sink's own reading error: its event loop waits tens of
      // milliseconds at times on this loaded machine (in the report), allowed for up to
      // SINK_READING_ERROR_MS. So rate + 1 arrivals must take more than 1000 + 12 - 5 - 27 ms:
      // no window of 980 ms holds more than the rate.
      expect(shortest).toBeGreaterThan(1000 + PACER_MARGIN_MS - 5 - SINK_READING_ERROR_MS);
      // What the cluster accepted is what the sink got: every acknowledged send, plus those whose
      // 200/250 was lost with the node or the database (accepted, yet answered with a cut connection).
      expect(totalCount).toBe(sink.copies.size);
      expect(views[0].stats.transactional.sent).toBe(totalCount);
    } finally {
      if (!stopped.load) await load.stop();
    }
  }, 240_000);
});
