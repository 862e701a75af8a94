/**
 * Builds many messages through the MessageBuilder in chunks, a few chunks in flight at a time
 * (broadcast expansion). A chunk is one worker task: one hop between threads instead of one per
 * message, whose fixed cost (postMessage, piscina's bookkeeping) was as large as composing a
 * small message (bench/RESULTS.md, broadcast section). The window keeps the pool's queue short,
 * so a transactional send that arrives meanwhile waits for at most a few chunks, not for the
 * whole batch.
 */
import type { BuildRequest, BuildResult, MessageBuilder } from './ports.js';

export interface ChunkOptions {
  /** Messages per worker task. */
  chunk: number;
  /** Chunks in flight at once (two per thread of a 2-core pool keeps both threads fed). */
  window: number;
}

/** Settles every request, in order; one failing request fails only itself. */
export async function buildInChunks(builder: MessageBuilder, requests: BuildRequest[], opts: ChunkOptions): Promise<PromiseSettledResult<BuildResult>[]> {
  const chunks: BuildRequest[][] = [];
  for (let i = 0; i < requests.length; i += opts.chunk) chunks.push(requests.slice(i, i + opts.chunk));
  const results: PromiseSettledResult<BuildResult>[][] = new Array(chunks.length);
  let next = 0;
  // Each lane takes the next chunk when its previous one is done: at most `window` in flight.
  const lane = async (): Promise<void> => {
    while (next < chunks.length) {
      const i = next++;
      results[i] = await buildChunk(builder, chunks[i]!);
    }
  };
  await Promise.all(Array.from({ length: Math.min(opts.window, chunks.length) }, lane));
  return results.flat();
}

function buildChunk(builder: MessageBuilder, chunk: BuildRequest[]): Promise<PromiseSettledResult<BuildResult>[]> {
  // A builder without buildMany (tests wrap build() to fail chosen entries) builds one by one.
  if (builder.buildMany) return builder.buildMany(chunk);
  return Promise.allSettled(chunk.map((r) => builder.build(r)));
}
