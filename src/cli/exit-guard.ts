/**
 * How `postrider serve` ends, on every path (SIGTERM, a fatal error, a failed start): always,
 * and never while LMDB is in the middle of a write.
 *
 * Why: lmdb-js commits on a libuv thread-pool thread, and while a batch holds transaction
 * callbacks (every Store.write is one) that thread waits for the main thread to run them.
 * process.exit(), and Node's own exit after an uncaught exception, stop the event loop and then
 * join the thread pool (uv__threadpool_cleanup → uv_thread_join): the write thread waits for
 * callbacks that will never run, the join never returns, and the process hangs with its ports
 * bound, deaf to SIGTERM, whose handler needs the event loop (kriszyp/lmdb-js#336).
 *
 * So every exit first closes the store (Store.stop lets the writes in flight finish, refuses new
 * ones, closes the environment) and calls process.exit only once no write is in flight. When
 * that does not happen in time, the process kills itself with SIGKILL, which needs no thread's
 * cooperation; LMDB is crash-safe, and every acknowledged write is already synced.
 */
import type { Logger } from '../log/logger.js';
import { settledWithin } from '../domain/settle.js';
import { isLmdbCommitFailure } from '../store/lmdb/env.js';

/** EX_SOFTWARE (sysexits.h): an internal error; systemd restarts the unit (Restart=on-failure). */
export const EXIT_FATAL = 70;
/** A fatal error gets this long to close the store (Store.stop bounds its own waits to 6 s). */
const FATAL_CLOSE_MS = 10_000;
/** Beyond shutdown.graceMs: the pipeline's and the store's bounded waits after the drain. */
const SHUTDOWN_MARGIN_MS = 10_000;
const FLUSH_MS = 1_000;

export interface ExitGuardOptions {
  logger: Logger;
  /** Closes the store and releases the data folder; true when no LMDB write is in flight. */
  close: () => Promise<boolean>;
}

export class ExitGuard {
  private ending = false;
  /** A fatal error came while the process was already ending: it still exits non-zero. */
  private failedWhileEnding = false;

  constructor(private readonly opts: ExitGuardOptions) {}

  /** From here on, an uncaught exception or unhandled rejection ends the process via fatal(). */
  install(): void {
    process.on('uncaughtException', (err) => void this.fatal(err));
    process.on('unhandledRejection', (reason) => {
      // lmdb-js leaves one internal promise of a failed commit (a full disk) unhandled
      // (kriszyp/lmdb-js#368). Every write of that commit has already failed for its caller
      // (HTTP 507, SMTP 452), so that one is dropped; anything else is fatal.
      if (isLmdbCommitFailure(reason)) {
        reason.commitError.catch(() => undefined);
        return;
      }
      void this.fatal(reason);
    });
  }

  /**
   * Orderly stop: stop() (the daemon drains within graceMs), then close; resolves with the exit
   * code once exiting is safe: 0, 1 when stop() failed, 70 after a fatal error during it. A
   * watchdog kills the process when the whole has not finished within graceMs plus a margin.
   */
  async shutdown(stop: () => Promise<void>, graceMs: number): Promise<number> {
    this.ending = true;
    this.watchdog(graceMs + SHUTDOWN_MARGIN_MS, 'shutdown did not finish in time');
    let code = 0;
    await stop().catch((err: unknown) => {
      this.opts.logger.error({ err }, 'shutdown failed');
      code = 1;
    });
    await this.settle();
    return this.failedWhileEnding ? EXIT_FATAL : code;
  }

  /** An error nothing handled: one log line, the store closed within a bound, exit 70. */
  async fatal(err: unknown): Promise<void> {
    if (this.ending) {
      this.opts.logger.error({ err }, 'fatal error while exiting');
      this.failedWhileEnding = true;
      return;
    }
    this.ending = true;
    this.opts.logger.fatal({ err }, 'fatal error: closing the store, then exiting');
    this.watchdog(FATAL_CLOSE_MS, 'the store did not close in time after a fatal error');
    await this.settle();
    await this.flushLog();
    process.exit(EXIT_FATAL);
  }

  /** Closes; returns once exiting is safe, or kills the process when it is not. */
  async settle(): Promise<void> {
    const safe = await this.opts.close().catch((err: unknown) => {
      this.opts.logger.error({ err }, 'closing the store failed');
      return false;
    });
    if (!safe) await this.kill('an LMDB write is still in flight after the store was closed');
  }

  private watchdog(ms: number, reason: string): void {
    // Not unref'd: it must fire even if nothing else keeps the event loop alive.
    setTimeout(() => void this.kill(`${reason} (${ms} ms)`), ms);
  }

  private async kill(reason: string): Promise<never> {
    this.opts.logger.fatal(`${reason}; ending the process with SIGKILL`);
    await this.flushLog();
    process.kill(process.pid, 'SIGKILL');
    // SIGKILL is delivered before process.kill returns to a process signalling itself.
    throw new Error('unreachable');
  }

  private flushLog(): Promise<unknown> {
    return settledWithin(new Promise<void>((resolve) => this.opts.logger.flush(() => resolve())), FLUSH_MS);
  }
}
