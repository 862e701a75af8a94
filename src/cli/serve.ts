/**
 * postrider serve: runs the daemon until SIGTERM/SIGINT. The only place signals are handled.
 * It holds the data folder's lock (store/folder-lock.ts) while it runs, and every way out goes
 * through the ExitGuard (cli/exit-guard.ts): the store is closed before the process exits.
 */
import { changedKeys } from '../config/keys.js';
import { loadConfig } from '../config/load.js';
import { markInitialKeyShown } from '../bootstrap.js';
import { Daemon } from '../daemon.js';
import type { Config } from '../config/schema.js';
import { createLogger, type Logger } from '../log/logger.js';
import { SdNotifier } from '../ops/sd-notify.js';
import { FolderLock } from '../store/lmdb/folder-lock.js';
import { parse, type CommandIo } from './args.js';
import { ExitGuard } from './exit-guard.js';

const USAGE = `Usage:
  postrider serve [--config PATH]

Runs the daemon: HTTP API, SMTP submission, delivery. Configuration comes from embedded
defaults, then the config file (--config or POSTRIDER_CONFIG), then POSTRIDER_* variables.
SIGTERM or SIGINT stop it gracefully.`;

export async function serveCommand(argv: string[], io: CommandIo): Promise<number> {
  const { values, help } = parse(argv, { config: { type: 'string' } }, USAGE, 0);
  if (help) {
    io.out(USAGE);
    return 0;
  }
  const readConfig = () => loadConfig({ configPath: values.config, env: io.env });
  const config = readConfig();
  const logger = createLogger({ level: config.log.level });
  // Before the store is opened: a second daemon on this folder stops here, naming the first.
  const lock = await FolderLock.acquire(config.dataDir);
  const daemon = new Daemon(config, logger);
  const exit = new ExitGuard({
    logger,
    close: async () => {
      await daemon.store.stop();
      if (daemon.engine.kind === 'lmdb' && daemon.engine.store.writesInFlight > 0) return false;
      lock.release();
      return true;
    },
  });
  exit.install();
  // Type=notify (systemd/postrider.service): systemd counts the unit started only at READY=1.
  const notifier = new SdNotifier({ env: io.env, onError: (err) => logger.warn({ err }, 'sd_notify failed') });
  const signals = takeSignals({ daemon, logger, notifier, readConfig, running: config });
  // The daemon lives until a signal, not until its last handle: during start nothing may hold
  // the event loop (listeners not open yet, idle pool threads and lmdb's write-thread callbacks
  // are unreferenced), and Node would then end the process with code 0, mid-start and silently.
  const keepAlive = setInterval(() => {}, 2 ** 31 - 1);
  try {
    await daemon.start();
  } catch (err) {
    clearInterval(keepAlive);
    await exit.settle(); // Daemon.start stopped what it had started; the lock goes too
    throw err;
  }
  await notifier.ready(`HTTP ${config.http.host}:${daemon.http.port}` + (daemon.smtp ? `, SMTP ${daemon.smtp.port}` : ''));
  await showInitialCredentials(daemon, io);
  const code = await new Promise<number>((resolve) => {
    signals.onStop((signal) => {
      logger.info({ signal }, 'shutting down');
      void notifier.stopping();
      void exit.shutdown(() => daemon.stop(), config.shutdown.graceMs).then(resolve);
    });
  });
  clearInterval(keepAlive);
  return code;
}

interface SignalDeps {
  daemon: Daemon;
  logger: Logger;
  notifier: SdNotifier;
  readConfig: () => Config;
  /** The configuration the daemon started with: a reload applies only its log level. */
  running: Config;
}

/**
 * Signals are taken from the start: a SIGTERM that arrives while the daemon starts (or prints
 * the first key) must shut it down in order, not kill it with the data folder still locked.
 * The first SIGTERM or SIGINT, early or not, reaches the handler given to onStop, once.
 */
function takeSignals(d: SignalDeps): { onStop(handler: (signal: string) => void): void } {
  let stop: ((signal: string) => void) | null = null;
  let early: string | null = null;
  let stopping = false;
  const onSignal = (signal: string) => {
    if (!stop) {
      early ??= signal;
      return;
    }
    if (stopping) return d.logger.info({ signal }, 'already shutting down: waiting for the work in flight');
    stopping = true;
    stop(signal);
  };
  // Kept for good (on, not once): a second SIGTERM or SIGINT during the shutdown (Ctrl-C twice,
  // npm or a supervisor passing the signal on) would otherwise take its default action and kill
  // the process mid-shutdown, cutting the work in flight and leaving daemon.lock behind.
  process.on('SIGTERM', () => onSignal('SIGTERM'));
  process.on('SIGINT', () => onSignal('SIGINT'));
  process.on('SIGHUP', () => {
    // Before start completes there is nothing to reload yet (and SIGHUP's default would end us).
    if (!stop) return d.logger.warn('SIGHUP during start ignored; send it again once the daemon runs');
    reload(d);
  });
  return {
    onStop(handler) {
      stop = handler;
      if (early !== null) onSignal(early);
    },
  };
}

/**
 * SIGHUP: re-read the configuration's reloadable parts (log level, TLS certificate files). The
 * other keys that changed in the file are named in a warning: they wait for a restart, and an
 * operator who edited delivery.rate and reloaded must not believe it applied.
 */
function reload({ daemon, logger, notifier, readConfig, running }: SignalDeps): void {
  let level: string | undefined;
  try {
    const next = readConfig();
    level = next.log.level;
    const waiting = changedKeys(running, next).filter((key) => key !== 'log.level');
    if (waiting.length > 0) logger.warn({ keys: waiting }, `reload: ${waiting.join(', ')} changed; a reload applies only log.level and re-reads the SMTP certificate files: restart for the rest`);
  } catch (err) {
    logger.error({ err }, 'reload: configuration invalid; keeping the current one');
    return;
  }
  void notifier.reloading();
  daemon.reload({ logLevel: level }).then(
    () => {
      logger.info({ level }, 'reloaded');
      void notifier.ready();
    },
    (err) => {
      logger.error({ err }, 'reload failed');
      void notifier.ready('reload failed; running with the previous configuration');
    },
  );
}

/** First start: the key is printed once, after a successful start (bootstrap.ts). */
async function showInitialCredentials(daemon: Daemon, io: CommandIo): Promise<void> {
  const c = daemon.initialCredentials;
  if (!c) return;
  io.err(
    `\nFirst start: created account ${c.accountId} and an account-level API key:\n\n    ${c.apiKey}\n\n` +
      `It is shown only now and saved to ${c.file} (mode 0600).\n` +
      `Sign in to the dashboard with it: ${daemon.dashboardUrl}\n`,
  );
  await markInitialKeyShown(daemon.store);
}
