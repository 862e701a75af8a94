/**
 * Piscina worker entry (loaded from dist/workers/worker.js). Dispatches one task and always
 * resolves: a thrown Error would cross the thread boundary as a bare Error without its `code`
 * and `field`, so failures are returned as plain `{code, message, field?}` data instead.
 *
 * Piscina loads this module once per thread, so the WorkerTasks made on the first task is the
 * thread's own: its compiled templates and parsed DKIM keys serve every later task of the
 * thread. Nothing is made at import time.
 *
 * On its first task a thread lowers its own scheduling priority (Linux): every task that is
 * left is background work nobody waits for (composition and signatures after the commit),
 * while the main thread takes sends and commits them. With one thread per
 * core and the main thread as well, the cores are shared; this way the pool gets every core the
 * main thread leaves idle instead of taking turns with it (issue 20, "use both cores").
 */
import { readlinkSync } from 'node:fs';
import { setPriority } from 'node:os';
import { isMainThread } from 'node:worker_threads';
import { Piscina } from 'piscina';
import { toTaskErrorData } from './errors.js';
import type { GenerateKeyOptions } from './dkim.js';
import type { RenderInput } from './render.js';
import { inboundAttachment, inboundPayloadBody, type InboundAttachmentTaskInput, type InboundPayloadTaskInput } from './inbound-tasks.js';
import { largeOwned } from './bytes.js';
import type { WorkerResponse, WorkerTask } from './protocol.js';
import { rawContentOf, type RawContentTaskInput } from './submission-tasks.js';
import { WorkerTasks, type BuildInput, type FinishInput } from './tasks.js';

let thread: WorkerTasks | undefined;

/** The niceness of pool threads (0 is the process's; 19 the lowest priority). */
const POOL_NICENESS = 10;

export default function runTask(msg: { task: WorkerTask; input: unknown }): Promise<WorkerResponse<unknown>> {
  if (!thread) {
    thread = new WorkerTasks();
    yieldToMainThread();
  }
  return runOn(thread, msg);
}

/**
 * setpriority(2) given a thread id applies to that thread alone on Linux; /proc/thread-self
 * names this thread's id. Elsewhere (or if refused) the thread keeps the process's priority.
 */
function yieldToMainThread(): void {
  if (isMainThread) return;
  try {
    const tid = Number(readlinkSync('/proc/thread-self').split('/').pop());
    if (Number.isInteger(tid) && tid > 0 && tid !== process.pid) setPriority(tid, POOL_NICENESS);
  } catch {
    // Not Linux, or not permitted: nothing to do.
  }
}

async function runOn(tasks: WorkerTasks, msg: { task: WorkerTask; input: unknown }): Promise<WorkerResponse<unknown>> {
  try {
    switch (msg?.task) {
      case 'build':
        return { ok: true, value: await tasks.buildMessage(msg.input as BuildInput) };
      case 'finishMany': {
        const value = await each(msg.input as FinishInput[], (input) => tasks.finishMessage(input));
        const large = largeOwned(value.flatMap((r) => (r.ok ? [r.value.raw] : [])));
        return large.length > 0 ? handedOver(value, large) : { ok: true, value };
      }
      case 'render':
        return { ok: true, value: tasks.render(msg.input as RenderInput) };
      case 'generateKey':
        return { ok: true, value: tasks.generateKey(msg.input as GenerateKeyOptions) };
      case 'inboundPayload': {
        const value = await inboundPayloadBody(msg.input as InboundPayloadTaskInput);
        return handedOver(value, [value.body]);
      }
      case 'inboundAttachment': {
        const value = await inboundAttachment(msg.input as InboundAttachmentTaskInput);
        return handedOver(value, value ? [value.content] : []);
      }
      case 'rawContent':
        return { ok: true, value: await rawContentOf(msg.input as RawContentTaskInput) };
      default:
        return { ok: false, error: { code: 'internal_error', message: `Unknown worker task "${String(msg?.task)}"` } };
    }
  } catch (err) {
    return { ok: false, error: toTaskErrorData(err) };
  }
}

/**
 * An answer whose byte arrays move to the main thread instead of being copied (piscina posts it
 * with their ArrayBuffers in the transfer list). The arrays must own all of their memory
 * (bytes.ts ownBytes); this thread cannot use them afterwards. Piscina unwraps the value, so the
 * main thread receives the response itself.
 */
function handedOver<T>(value: T, bytes: Uint8Array<ArrayBuffer>[]): WorkerResponse<T> {
  const response: WorkerResponse<T> = { ok: true, value };
  const movable = { [Piscina.transferableSymbol]: bytes.map((b) => b.buffer), [Piscina.valueSymbol]: response };
  // Typed by piscina through its own unique symbols, which its getters above name only as `symbol`.
  return Piscina.move(movable as unknown as Parameters<typeof Piscina.move>[0]) as unknown as WorkerResponse<T>;
}

/**
 * One after the other on this thread: a batch saves the per-task cost of a hop between threads
 * (postMessage, piscina's bookkeeping), which was as large as composing a small message.
 */
async function each<I, O>(inputs: I[], run: (input: I) => Promise<O>): Promise<WorkerResponse<O>[]> {
  const out: WorkerResponse<O>[] = [];
  for (const input of inputs) {
    try {
      out.push({ ok: true, value: await run(input) });
    } catch (err) {
      out.push({ ok: false, error: toTaskErrorData(err) });
    }
  }
  return out;
}

