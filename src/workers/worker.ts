/**
 * Piscina worker entry (loaded from dist/workers/worker.js). Dispatches one task and always
 * resolves: a thrown Error would cross the thread boundary as a bare Error without its `code`
 * and `field`, so failures are returned as plain `{code, message, field?}` data instead.
 * Nothing runs at import time except the DKIM key memo, which must be installed before any
 * other module loads mailauth (dkim-key-cache.ts), hence first.
 */
import './dkim-key-cache.js';
import { toTaskErrorData } from './errors.js';
import type { WorkerResponse, WorkerTask } from './protocol.js';
import { buildMessage, generateKey, signRaw, type BuildInput, type SignRawInput } from './tasks.js';
import type { GenerateKeyOptions } from './dkim.js';

export default async function runTask(msg: { task: WorkerTask; input: unknown }): Promise<WorkerResponse<unknown>> {
  try {
    switch (msg?.task) {
      case 'build':
        return { ok: true, value: await buildMessage(msg.input as BuildInput) };
      case 'sign':
        return { ok: true, value: await signRaw(msg.input as SignRawInput) };
      case 'generateKey':
        return { ok: true, value: generateKey(msg.input as GenerateKeyOptions) };
      default:
        return { ok: false, error: { code: 'internal_error', message: `Unknown worker task "${String(msg?.task)}"` } };
    }
  } catch (err) {
    return { ok: false, error: toTaskErrorData(err) };
  }
}
