/**
 * Broadcast expansion builds its messages in chunks: a chunk of entries is one worker task, one
 * hop between threads instead of one per message, whose fixed cost (postMessage, piscina's
 * bookkeeping) was as large as composing a small message (bench/RESULTS.md, broadcast section).
 * A bounded number of chunks is in flight at once: enough to keep every thread busy while the
 * main thread commits, without reading and building a whole broadcast ahead of its commits.
 */
import type { BuildRequest, BuildResult, MessageBuilder } from './ports.js';

/** Builds every request, each settling on its own, in order; one failure fails only itself. */
export function buildEach(builder: MessageBuilder, requests: BuildRequest[]): Promise<PromiseSettledResult<BuildResult>[]> {
  if (requests.length === 0) return Promise.resolve([]);
  // A builder without buildMany (tests wrap build() to fail chosen entries) builds one by one.
  if (builder.buildMany) return builder.buildMany(requests);
  return Promise.allSettled(requests.map((r) => builder.build(r)));
}

export interface ChunkOptions {
  /** Rows per chunk. */
  chunk: number;
  /** Chunks being built at once. */
  window: number;
}

export interface BuiltChunk<T> {
  built: T;
  /** Rows in the chunk. */
  rows: number;
  /** One past the index of its last row: the cursor once it is committed. */
  end: number;
}

/**
 * Reads rows chunk by chunk from `from` on, builds up to `window` chunks at once and hands them
 * out in row order. Rows are read when their chunk starts, so reading never runs ahead of the
 * window.
 */
export class ChunkWindow<R extends { index: number }, T> {
  private readonly inFlight: Promise<BuiltChunk<T>>[] = [];
  private exhausted = false;

  constructor(
    private readonly read: (from: number, count: number) => R[],
    private readonly build: (rows: R[]) => Promise<T>,
    private readonly opts: ChunkOptions,
    private from: number,
  ) {}

  /** The next chunk in row order, built; null once every row is. */
  async next(): Promise<BuiltChunk<T> | null> {
    this.fill();
    const head = this.inFlight.shift();
    if (!head) return null;
    this.fill(); // keep `window` chunks building while this one is awaited
    return head;
  }

  /** Stops reading; chunks still building finish in the pool and are dropped. */
  abandon(): void {
    this.exhausted = true;
    this.inFlight.length = 0;
  }

  private fill(): void {
    while (!this.exhausted && this.inFlight.length < this.opts.window) {
      const rows = this.read(this.from, this.opts.chunk);
      if (rows.length === 0) {
        this.exhausted = true;
        return;
      }
      const end = rows[rows.length - 1]!.index + 1;
      this.from = end;
      const chunk = this.build(rows).then((built) => ({ built, rows: rows.length, end }));
      // Awaited by next() in turn; marked handled now so a chunk dropped by abandon(), or one
      // failing while an earlier one is awaited, is not an unhandled rejection.
      chunk.catch(() => undefined);
      this.inFlight.push(chunk);
    }
  }
}
