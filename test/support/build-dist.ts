/**
 * vitest globalSetup (both vitest configs): compiles src to dist once before the run.
 *
 * Some tests cannot load the TypeScript sources: the worker pool starts its threads on
 * dist/workers/worker.js (a worker thread has no TypeScript loader) and the e2e tests run
 * bin/postrider.js over dist, and the daemon serves the dashboard from dist/dashboard. Without this step a plain `npx vitest run` would test whatever an
 * earlier build left there. The build is tsgo, a few seconds; nothing is printed when it
 * succeeds, and a compiler error fails the run with the compiler's output.
 */
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const TSC = fileURLToPath(new URL('../../node_modules/typescript/bin/tsc', import.meta.url));
const VITE = fileURLToPath(new URL('../../node_modules/vite/bin/vite.js', import.meta.url));

/** Runs one build step; a failure throws with the tool's output. */
async function step(what: string, args: string[]): Promise<void> {
  try {
    await promisify(execFile)(process.execPath, args, { cwd: ROOT, maxBuffer: 16 * 1024 * 1024 });
  } catch (err) {
    const { stdout, stderr } = err as { stdout?: string; stderr?: string };
    const output = `${stdout ?? ''}${stderr ?? ''}`.trim() || String(err);
    throw new Error(`The build of ${what} failed, so the tests would run stale code:\n${output}`);
  }
}

/** The daemon (tsgo), then the web dashboard (Vite, about a second) that it serves from dist/dashboard. */
export default async function buildDist(): Promise<void> {
  await step('dist (tsc -p tsconfig.json)', [TSC, '-p', 'tsconfig.json']);
  await step('the dashboard (vite build)', [VITE, 'build', '--config', 'dashboard/vite.config.ts', '--logLevel', 'warn']);
}
