/**
 * sd_notify(3) for `Type=notify` (systemd/postrider.service): tells systemd when the daemon is
 * ready, reloading or stopping.
 *
 * The protocol is one unix datagram to $NOTIFY_SOCKET, but Node has no unix datagram sockets
 * (dgram is UDP only) and postrider loads no native addons for it. So each message runs the
 * `systemd-notify` binary, which ships with systemd. Its messages come from a child, not the main
 * process, so the unit needs `NotifyAccess=all`. systemd-notify (systemd 246 and later) follows
 * its message with a BARRIER=1 and waits until the manager has processed it; the sender is still
 * alive then, so systemd attributes the message to this unit (the race of older versions, where
 * the child exited before systemd looked up its cgroup, is gone).
 *
 * Kept hand-written (a few lines around execFile) for that reason: the npm packages for
 * sd_notify are native addons.
 *
 * Without $NOTIFY_SOCKET (not under systemd, or Type=simple) every call does nothing.
 * A failed notification is reported through onError and never throws: the daemon keeps running
 * (systemd then fails the start at TimeoutStartSec, which names the problem in the journal).
 */
import { execFile } from 'node:child_process';

export interface SdNotifierOptions {
  /** The process environment (serve passes io.env); only NOTIFY_SOCKET and PATH are used. */
  env: NodeJS.ProcessEnv;
  /** The systemd-notify executable; default: found on PATH. */
  command?: string;
  /** Upper bound for one notification; systemd-notify itself waits at most 5 s for systemd. */
  timeoutMs?: number;
  onError?: (err: Error) => void;
}

export class SdNotifier {
  private readonly socket: string | undefined;
  private readonly command: string;
  private readonly timeoutMs: number;
  private readonly onError: (err: Error) => void;
  /** Messages are sent one after the other, so READY=1 never overtakes a RELOADING=1. */
  private chain: Promise<void> = Promise.resolve();

  constructor(private readonly opts: SdNotifierOptions) {
    this.socket = opts.env.NOTIFY_SOCKET || undefined;
    this.command = opts.command ?? 'systemd-notify';
    this.timeoutMs = opts.timeoutMs ?? 10_000;
    this.onError = opts.onError ?? (() => {});
  }

  /** True when systemd waits for notifications. */
  get enabled(): boolean {
    return this.socket !== undefined;
  }

  /** Start-up (or a reload) is complete: the unit becomes active. */
  ready(status?: string): Promise<void> {
    return this.send(['READY=1', ...statusLine(status)]);
  }

  /**
   * A reload began (SIGHUP). MONOTONIC_USEC is CLOCK_MONOTONIC in microseconds, which
   * `Type=notify-reload` (systemd 253+) requires and older versions ignore. Follow with ready().
   */
  reloading(): Promise<void> {
    return this.send(['RELOADING=1', `MONOTONIC_USEC=${monotonicUsec()}`]);
  }

  /** Shutdown began: systemctl shows "deactivating" while in-flight work drains. */
  stopping(): Promise<void> {
    return this.send(['STOPPING=1']);
  }

  /** Free text shown by `systemctl status`. */
  status(text: string): Promise<void> {
    return this.send(statusLine(text));
  }

  private send(assignments: string[]): Promise<void> {
    if (!this.socket || assignments.length === 0) return Promise.resolve();
    const run = () => this.exec(assignments);
    this.chain = this.chain.then(run, run);
    return this.chain;
  }

  private exec(assignments: string[]): Promise<void> {
    const env: NodeJS.ProcessEnv = { NOTIFY_SOCKET: this.socket };
    if (this.opts.env.PATH) env.PATH = this.opts.env.PATH;
    return new Promise((resolve) => {
      execFile(this.command, assignments, { env, timeout: this.timeoutMs, windowsHide: true }, (err, _stdout, stderr) => {
        if (err) {
          const detail = String(stderr).trim();
          this.onError(new Error(`systemd-notify ${assignments[0]} failed: ${detail || err.message}`, { cause: err }));
        }
        resolve();
      });
    });
  }
}

/** STATUS= is one line; newlines would start another assignment. */
function statusLine(text: string | undefined): string[] {
  return text ? [`STATUS=${text.replace(/[\r\n]+/g, ' ')}`] : [];
}

/** libuv's hrtime is CLOCK_MONOTONIC on Linux, the clock systemd compares against. */
function monotonicUsec(): bigint {
  return process.hrtime.bigint() / 1000n;
}
