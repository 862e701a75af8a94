/**
 * vitest globalSetup (both vitest configs): compiles src to dist once before the run.
 *
 * Some tests cannot load the TypeScript sources: the worker pool starts its threads on
 * dist/workers/worker.js (a worker thread has no TypeScript loader) and the e2e tests run
 * bin/postrider.js over dist. Without this step a plain `npx vitest run` would test whatever an
 * earlier build left there. The build is tsgo, a few seconds; nothing is printed when it
 * succeeds, and a compiler error fails the run with the compiler's output.
 */
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const TSC = fileURLToPath(new URL('../../node_modules/typescript/bin/tsc', import.meta.url));

export default async function buildDist(): Promise<void> {
  try {
    await promisify(execFile)(process.execPath, [TSC, '-p', 'tsconfig.json'], { cwd: ROOT, maxBuffer: 16 * 1024 * 1024 });
  } catch (err) {
    const { stdout, stderr } = err as { stdout?: string; stderr?: string };
    const output = `${stdout ?? ''}${stderr ?? ''}`.trim() || String(err);
    throw new Error(`The build of dist (tsc -p tsconfig.json) failed, so the tests would run stale code:\n${output}`);
  }
}
