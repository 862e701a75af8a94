/**
 * Piscina worker entry (loaded from dist/workers/worker.js). Dispatches one task and always
 * resolves: a thrown Error would cross the thread boundary as a bare Error without its `code`
 * and `field`, so failures are returned as plain `{code, message, field?}` data instead.
 *
 * Piscina loads this module once per thread, so the WorkerTasks made on the first task is the
 * thread's own: its compiled templates and parsed DKIM keys serve every later task of the
 * thread. Nothing is made at import time.
 */
import { toTaskErrorData } from './errors.js';
import type { GenerateKeyOptions } from './dkim.js';
import type { WorkerResponse, WorkerTask } from './protocol.js';
import { WorkerTasks, type BuildInput, type FinishInput, type SignRawInput } from './tasks.js';

let thread: WorkerTasks | undefined;

export default function runTask(msg: { task: WorkerTask; input: unknown }): Promise<WorkerResponse<unknown>> {
  thread ??= new WorkerTasks();
  return runOn(thread, msg);
}

async function runOn(tasks: WorkerTasks, msg: { task: WorkerTask; input: unknown }): Promise<WorkerResponse<unknown>> {
  try {
    switch (msg?.task) {
      case 'build':
        return { ok: true, value: await tasks.buildMessage(msg.input as BuildInput) };
      case 'buildMany':
        return { ok: true, value: await each(msg.input as BuildInput[], (input) => tasks.buildMessage(input)) };
      case 'finishMany':
        return { ok: true, value: await each(msg.input as FinishInput[], (input) => tasks.finishMessage(input)) };
      case 'signTimed':
        return { ok: true, value: await tasks.signTimed(msg.input as SignRawInput) };
      case 'generateKey':
        return { ok: true, value: tasks.generateKey(msg.input as GenerateKeyOptions) };
      default:
        return { ok: false, error: { code: 'internal_error', message: `Unknown worker task "${String(msg?.task)}"` } };
    }
  } catch (err) {
    return { ok: false, error: toTaskErrorData(err) };
  }
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
