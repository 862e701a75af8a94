/**
 * Runs work with Error.stackTraceLimit at 0 on this thread while it lasts: for work that makes
 * errors it never throws. Node 20's stream.pipeline aborts an AbortController once the pipeline
 * finished, which builds a DOMException (AbortError) and captures its stack; nodemailer's MIME
 * builder joins every part with pipeline, so each composed message made one such error per part,
 * 5.5% of the worker threads' samples end to end (bench/end-to-end.mjs --profile), and composing
 * took 13-15% less CPU without stacks (2,000 messages, alternating). An error the work does throw
 * keeps its message and code (TaskError), which is what reaches the main thread; only its stack,
 * a path inside nodemailer, is lost.
 *
 * Counted, so that work overlapping on one thread (a batch's messages) restores the limit only
 * when the last one ends.
 */
export class QuietStacks {
  private depth = 0;
  private saved = Error.stackTraceLimit;

  async run<T>(work: () => Promise<T>): Promise<T> {
    if (this.depth++ === 0) {
      this.saved = Error.stackTraceLimit;
      Error.stackTraceLimit = 0;
    }
    try {
      return await work();
    } finally {
      if (--this.depth === 0) Error.stackTraceLimit = this.saved;
    }
  }
}
