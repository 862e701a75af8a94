/**
 * The synchronous way to PostgreSQL for the shared rate and pacer (rates.ts, pacer.ts), whose
 * methods delivery calls in its synchronous loop (port.ts: available(), take(), tryTake(),
 * msUntilAvailable(), the pacer's take()). They must answer with the cluster's budget, not a
 * guess: of four nodes asking for 8 of a burst of 10 at once, the four together get exactly 10.
 * A Node.js thread cannot wait for a socket, so the statement runs in a worker thread with its
 * own connection (bridge-worker.ts) while the main thread blocks in Atomics.wait until the
 * answer is posted back (and reads it with receiveMessageOnPort, without an event-loop turn).
 *
 * The cost is a blocked event loop for one round trip (0.3 to 0.7 ms to a local server,
 * measured on a loaded 2-core test machine) each time a node asks its rate or pacer row;
 * rates.ts reserves blocks so that it asks once per block, not per start. Bounded: a call waits at most `callTimeoutMs` (then answers "no answer", which
 * the callers take as nothing granted), and after a call that timed out no call blocks until
 * the late answer came, so a slow or unreachable database costs one wait, not one per call.
 * A late answer is dropped: what it granted counts as spent (the budget errs on the safe side).
 *
 * post() sends a statement without waiting (a block's spent starts, its return); the worker
 * runs statements in the order sent on its one connection, so a later call sees them.
 */
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import { MessageChannel, receiveMessageOnPort, Worker, type MessagePort } from 'node:worker_threads';
import { RECONNECT_BACKOFF_MAX_S } from '../../domain/database-unavailable.js';
import { textWithoutNul } from '../../domain/postgres-text.js';
import { BRIDGE_WORKER_SOURCE } from './bridge-worker.js';
import { bridgeSettings, type ConnectionOptions } from './connection.js';

export interface SyncBridgeOptions extends ConnectionOptions {
  /** Longest a call blocks the event loop for its answer. */
  callTimeoutMs: number;
  /** Longest the first call waits for the worker to start and connect. */
  bootTimeoutMs: number;
  /** A statement failed, or the worker did (logged; never thrown at a caller). */
  onError: (err: unknown) => void;
}

interface Reply {
  id?: number;
  rows?: unknown[];
  error?: string;
  ready?: boolean;
}

export class SyncBridge {
  private worker: Worker | undefined;
  private port: MessagePort | undefined;
  private readonly flag = new Int32Array(new SharedArrayBuffer(4));
  private booted = false;
  /** Until when a call waits for the worker to start (performance.now). */
  private bootDeadline = 0;
  private seq = 0;
  /** A call that timed out and whose answer has not come yet (0: none). */
  private overdue = 0;
  private closed = false;

  constructor(private readonly o: SyncBridgeOptions) {}

  /** Starts the worker (at the first rate or pacer, so that its boot overlaps the daemon's start). */
  start(): void {
    if (this.worker || this.closed) return;
    const { port1, port2 } = new MessageChannel();
    const driver = pathToFileURL(createRequire(import.meta.url).resolve('postgres')).href;
    const workerData = { port: port2, flag: this.flag, driver, url: this.o.url, settings: bridgeSettings(this.o), backoffMaxS: RECONNECT_BACKOFF_MAX_S };
    const worker = new Worker(BRIDGE_WORKER_SOURCE, { eval: true, workerData, transferList: [port2] });
    worker.unref();
    worker.on('error', (err) => this.o.onError(err));
    worker.on('exit', () => {
      // A worker that died is started again by the next call.
      if (this.worker === worker) this.reset();
    });
    port1.on('message', (m: Reply) => this.settle(m));
    port1.unref();
    this.worker = worker;
    this.port = port1;
    this.bootDeadline = performance.now() + this.o.bootTimeoutMs;
  }

  /** Runs `text` and answers its rows, blocking; undefined when it failed or took too long. */
  call<T>(text: string, params: unknown[]): T[] | undefined {
    if (this.closed) return undefined;
    this.start();
    if (!this.booted && !this.waitFor((m) => m.ready !== undefined, this.bootDeadline - performance.now())) return undefined;
    const late = this.overdue;
    if (late !== 0 && !this.waitFor((m) => m.id === late, 0)) return undefined;
    const id = ++this.seq;
    this.port!.postMessage({ id, text, params: sendable(params), sync: true });
    const answer = this.waitFor((m) => m.id === id, this.o.callTimeoutMs);
    if (!answer) this.overdue = id;
    return answer?.rows as T[] | undefined;
  }

  /** Sends `text` without waiting; it runs after every statement sent before it. */
  post(text: string, params: unknown[]): void {
    if (this.closed) return;
    this.start();
    this.port!.postMessage({ id: ++this.seq, text, params: sendable(params), sync: false });
  }

  /** Ends the connection after the statements already sent, and the worker. */
  async close(): Promise<void> {
    this.closed = true;
    const worker = this.worker;
    if (!worker) return;
    const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
    this.port!.postMessage({ close: true });
    const timer = setTimeout(() => void worker.terminate(), 6_000);
    await exited;
    clearTimeout(timer);
  }

  /**
   * Blocks until a message matching `wanted` arrived (answers it) or `timeoutMs` passed
   * (undefined). Other messages are settled on the way (errors reported, late answers dropped).
   */
  private waitFor(wanted: (m: Reply) => boolean, timeoutMs: number): Reply | undefined {
    const end = performance.now() + timeoutMs;
    for (;;) {
      // Read before draining: a message posted after the drain has moved the flag, so the wait
      // below returns at once instead of missing its notify.
      const seen = Atomics.load(this.flag, 0);
      for (let r = receiveMessageOnPort(this.port!); r; r = receiveMessageOnPort(this.port!)) {
        const m = r.message as Reply;
        this.settle(m);
        if (wanted(m)) return m;
      }
      const left = end - performance.now();
      if (left <= 0) return undefined;
      Atomics.wait(this.flag, 0, seen, left);
    }
  }

  private settle(m: Reply): void {
    if (m.ready !== undefined) this.booted = true;
    if (m.id !== undefined && m.id === this.overdue) this.overdue = 0;
    if (m.error !== undefined) this.o.onError(new Error(`coordination bridge: ${m.error}`));
  }

  private reset(): void {
    this.worker = undefined;
    this.port?.close();
    this.port = undefined;
    this.booted = false;
    this.overdue = 0;
  }
}

/** The parameters as the pool's text type would send them (domain/postgres-text.ts: no U+0000). */
function sendable(params: unknown[]): unknown[] {
  return params.map((p) => (typeof p === 'string' ? textWithoutNul(p) : p));
}
