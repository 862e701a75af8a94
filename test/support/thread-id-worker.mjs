/**
 * A worker entry for tests of the pool's threading: runs the compiled entry (dist/workers/
 * worker.js) unchanged and adds to a build's result the id of the thread that ran it, so a test
 * can see which of the pool's threads did the work. JavaScript, because a worker thread has no
 * TypeScript loader.
 */
import { threadId } from 'node:worker_threads';
import runTask from '../../dist/workers/worker.js';

export default async function runTraced(msg) {
  const response = await runTask(msg);
  return response.ok && msg.task === 'build' ? { ok: true, value: { ...response.value, threadId } } : response;
}
