/**
 * The worker-thread pool (piscina) that runs the CPU-bound tasks of tasks.ts off the main
 * thread, so rendering, MIME building, RSA signing and reading received mail never stall the
 * HTTP and SMTP listeners.
 *
 * Workers answer `{ok, value}` or `{ok: false, error}` (see worker.ts); a failure is rethrown
 * here as a TaskError with the same code, message and field.
 */
import { access } from 'node:fs/promises';
import os from 'node:os';
import { fileURLToPath } from 'node:url';
import { Piscina } from 'piscina';
import { asBuffer } from '../domain/bytes.js';
import type { InboundAttachment } from '../inbound/attachment-at.js';
import { copyInTurns, largeOwned, ownBytes } from './bytes.js';
import type { GeneratedKey, GenerateKeyOptions } from './dkim.js';
import { TaskError } from './errors.js';
import type { InboundAttachmentTaskInput, InboundPayloadTaskInput, InboundPayloadTaskOutput } from './inbound-tasks.js';
import { inLane, LaneQueue, type Lane } from './task-lanes.js';
import type { WorkerRequest, WorkerResponse, WorkerResults } from './protocol.js';
import type { RenderInput, RenderOutput } from './render.js';
import type { RawContentTaskOutput } from './submission-tasks.js';
import type { BuildInput, BuildOutput, FinishInput, FinishOutput } from './tasks.js';

export interface WorkerPoolOptions {
  /**
   * Worker threads; default: one per available core. Not one less: the main thread mostly waits
   * (for fsync, for the network), so a core left to it sat idle while the one thread of a 2-core
   * machine capped every signed intake (bench/RESULTS.md, DKIM and broadcast sections). When the
   * main thread is busy the OS shares the cores; piscina queues tasks beyond the threads.
   */
  threads?: number;
  /** The compiled worker module, an ES module whose default export runs a task; default dist/workers/worker.js. */
  workerFile?: string;
  /** Called when a worker fails outside any task (piscina replaces the thread). */
  onError?: (err: Error) => void;
}

export interface WorkerPoolStats {
  threads: number;
  /** Tasks waiting for a free thread. */
  queued: number;
  /** 0..1, the share of time the threads were busy, as estimated by piscina. */
  utilization: number;
}

// The worker must be compiled JavaScript: a worker thread has no TypeScript loader, not even
// when vitest runs this file from its TS source. Both src/workers/pool.ts and
// dist/workers/pool.js are two levels below the project root, so this one path fits both.
const DEFAULT_WORKER_FILE = fileURLToPath(new URL('../../dist/workers/worker.js', import.meta.url));
// What piscina loads in each thread: it imports the worker module (entry.cts says why).
const ENTRY_FILE = fileURLToPath(new URL('../../dist/workers/entry.cjs', import.meta.url));

export class WorkerPool {
  private readonly threads: number;
  private readonly workerFile: string;
  private readonly onError: (err: Error) => void;
  private pool: Piscina<WorkerRequest, WorkerResponse<unknown>> | null = null;
  private stopping = false;

  constructor(opts: WorkerPoolOptions = {}) {
    this.threads = opts.threads ?? os.availableParallelism();
    if (!Number.isInteger(this.threads) || this.threads < 1) throw new RangeError('WorkerPool threads must be a positive integer');
    this.workerFile = opts.workerFile ?? DEFAULT_WORKER_FILE;
    this.onError = opts.onError ?? ((err) => process.emitWarning(err, { code: 'POSTRIDER_WORKER' }));
  }

  async start(): Promise<void> {
    if (this.pool) return;
    // Fail at start with a useful message rather than on the first send.
    for (const file of [ENTRY_FILE, this.workerFile]) {
      try {
        await access(file);
      } catch {
        throw new Error(`Worker file ${file} not found; run "npm run build" first`);
      }
    }
    this.stopping = false;
    const pool = new Piscina<WorkerRequest, WorkerResponse<unknown>>({
      filename: ENTRY_FILE,
      workerData: { moduleFile: this.workerFile },
      // A fixed size: threads start now and stay, so the first send does not pay the start-up.
      minThreads: this.threads,
      maxThreads: this.threads,
      taskQueue: new LaneQueue(),
    });
    // Without a listener an 'error' event would throw and take the whole daemon down.
    pool.on('error', (err: unknown) => this.onError(err instanceof Error ? err : new Error(String(err))));
    this.pool = pool;
  }

  /** Destroys the pool; tasks still queued or running are rejected with service_unavailable. */
  async stop(): Promise<void> {
    const pool = this.pool;
    if (!pool) return;
    this.stopping = true;
    this.pool = null;
    await pool.destroy();
  }

  build(input: BuildInput): Promise<BuildOutput> {
    return this.run({ task: 'build', input });
  }

  /**
   * Composes and signs committed messages in one task on one thread (the finishing stage, after
   * the commit): background work, queued behind the tasks a client waits for (a broadcast's check
   * render, a new domain's key; task-lanes.ts). Each input settles on its own, in order. A large
   * committed message is handed to the thread rather than copied (bytes.ts largeOwned): the caller
   * must not use an input's `raw` afterwards.
   */
  async finishMany(inputs: FinishInput[]): Promise<PromiseSettledResult<FinishOutput>[]> {
    if (inputs.length === 0) return [];
    const answers = await this.run({ task: 'finishMany', input: inputs }, { lane: 'background', transfer: largeOwned(inputs.map((i) => i.raw)).map((b) => b.buffer) });
    return answers.map((a): PromiseSettledResult<FinishOutput> =>
      a.ok ? { status: 'fulfilled', value: a.value } : { status: 'rejected', reason: TaskError.fromData(a.error) },
    );
  }

  /** Renders a template's parts with data, nothing composed: a client waits for it (the waited lane). */
  render(input: RenderInput): Promise<RenderOutput> {
    return this.run({ task: 'render', input });
  }

  generateKey(opts: GenerateKeyOptions): Promise<GeneratedKey> {
    return this.run({ task: 'generateKey', input: opts });
  }

  /**
   * A received message's JSON for its route, as UTF-8 bytes, in the inbound lane (task-lanes.ts).
   * The raw bytes are handed to the thread, not copied, when they own their memory: the caller
   * must not use `input.raw` afterwards.
   */
  inboundPayload(input: InboundPayloadTaskInput): Promise<InboundPayloadTaskOutput> {
    const raw = ownBytes(input.raw);
    return this.run({ task: 'inboundPayload', input: { ...input, raw } }, { lane: 'inbound', transfer: [raw.buffer] });
  }

  /**
   * The attachment at `index` of a received message (null when there is none), in the inbound
   * lane; `input.raw` is handed over as in inboundPayload, and the content comes back the same way.
   */
  async inboundAttachment(input: InboundAttachmentTaskInput): Promise<InboundAttachment | null> {
    const raw = ownBytes(input.raw);
    const found = await this.run({ task: 'inboundAttachment', input: { ...input, raw } }, { lane: 'inbound', transfer: [raw.buffer] });
    return found && { ...found, content: asBuffer(found.content) };
  }

  /**
   * What activity shows of an SMTP-submitted message, read by mailparser on a thread
   * (submission-tasks.ts). The message is copied for the thread a MiB per turn: the caller keeps
   * using its own. A client waits for its 250: the waited lane.
   */
  async rawContent(raw: Uint8Array): Promise<RawContentTaskOutput> {
    const copy = await copyInTurns(raw);
    return this.run({ task: 'rawContent', input: { raw: copy } }, { transfer: [copy.buffer] });
  }

  stats(): WorkerPoolStats {
    const pool = this.pool;
    if (!pool) return { threads: 0, queued: 0, utilization: 0 };
    return { threads: pool.threads.length, queued: pool.queueSize, utilization: pool.utilization };
  }

  /** `transfer`: ArrayBuffers of the request moved to the thread (piscina's transfer list) rather than copied. */
  private async run<R extends WorkerRequest>(request: R, opts: { lane?: Lane; transfer?: ArrayBuffer[] } = {}): Promise<WorkerResults[R['task']]> {
    const pool = this.pool;
    if (!pool) throw new TaskError('service_unavailable', 'The worker pool is not running');
    let response: WorkerResponse<unknown>;
    try {
      response = await pool.run(inLane(request, opts.lane ?? 'waited'), { transferList: opts.transfer });
    } catch (err) {
      // The worker itself failed (crashed, was terminated by stop()): not a task error.
      if (this.stopping) throw new TaskError('service_unavailable', 'The worker pool is shutting down', undefined, { cause: err });
      const reason = err instanceof Error ? err.message : String(err);
      throw new TaskError('internal_error', `Worker failed: ${reason}`, undefined, { cause: err });
    }
    if (!response.ok) throw TaskError.fromData(response.error);
    return response.value as WorkerResults[R['task']];
  }
}

