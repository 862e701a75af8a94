/**
 * The file piscina loads in every worker thread; it loads the worker module (worker.ts, or a
 * test's traced entry) named in workerData with import().
 *
 * CommonJS on purpose. piscina loads its file with require() first, and since Node 20.19
 * require() of an ES module links the module graph synchronously (require(esm)). A thread
 * terminated inside that link, which is what the pool's stop() does to threads still loading (a
 * daemon stopped soon after its start, on a busy machine), ends the whole process: Node's
 * ModuleWrap::InstantiateSync then asks an unlinked module IsGraphAsync(), a V8 "FATAL ERROR"
 * no handler sees (CI's "Worker exited unexpectedly" in a test file that stopped a daemon at
 * once). import() links asynchronously, where a termination is an ordinary exception.
 */
import { pathToFileURL } from 'node:url';
import { workerData } from 'node:worker_threads';

type Handler = (request: unknown) => unknown;

const { moduleFile } = workerData as { moduleFile: string };
// Started as the thread starts, so the first task does not wait for it. A failure to load is
// each task's error (the pool names it), not an unhandled rejection that ends the thread.
const loading: Promise<Handler> = import(pathToFileURL(moduleFile).href).then((m: { default: Handler }) => m.default);
loading.catch(() => undefined);

export = async function runTask(request: unknown): Promise<unknown> {
  return (await loading)(request);
};
