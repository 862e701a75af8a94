/**
 * postrider serve: runs the daemon until SIGTERM/SIGINT. The only place signals are handled.
 * It holds the data folder's lock (store/folder-lock.ts) while it runs, and every way out goes
 * through the ExitGuard (cli/exit-guard.ts): the store is closed before the process exits.
 */
import { loadConfig } from '../config/load.js';
import { markInitialKeyShown } from '../bootstrap.js';
import { Daemon } from '../daemon.js';
import { createLogger } from '../log/logger.js';
import { SdNotifier } from '../ops/sd-notify.js';
import { FolderLock } from '../store/folder-lock.js';
import { parse, type CommandIo } from './args.js';
import { ExitGuard } from './exit-guard.js';

const USAGE = `Usage:
  postrider serve [--config PATH]

Runs the daemon: HTTP API, SMTP submission, delivery. Configuration comes from embedded
defaults, then the config file (--config or POSTRIDER_CONFIG), then POSTRIDER_* variables.
SIGTERM or SIGINT stop it gracefully.`;

export async function serveCommand(argv: string[], io: CommandIo): Promise<number> {
  const { values, help } = parse(argv, { config: { type: 'string' } }, USAGE);
  if (help) {
    io.out(USAGE);
    return 0;
  }
  const config = loadConfig({ configPath: values.config, env: io.env });
  const logger = createLogger({ level: config.log.level });
  // Before the store is opened: a second daemon on this folder stops here, naming the first.
  const lock = await FolderLock.acquire(config.dataDir);
  const daemon = new Daemon(config, logger);
  const exit = new ExitGuard({
    logger,
    close: async () => {
      await daemon.store.stop();
      if (daemon.store.writesInFlight > 0) return false;
      lock.release();
      return true;
    },
  });
  exit.install();
  // Type=notify (systemd/postrider.service): systemd counts the unit started only at READY=1.
  const notifier = new SdNotifier({ env: io.env, onError: (err) => logger.warn({ err }, 'sd_notify failed') });
  // Signals are taken from the start: a SIGTERM that arrives while the daemon starts (or prints
  // the first key) must shut it down in order, not kill it with the data folder still locked.
  let signalled: ((signal: string) => void) | null = null;
  const early: string[] = [];
  const onStop = (signal: string) => (signalled ? signalled(signal) : early.push(signal));
  process.once('SIGTERM', () => onStop('SIGTERM'));
  process.once('SIGINT', () => onStop('SIGINT'));
  // SIGHUP: re-read the configuration's reloadable parts (log level, TLS certificate files).
  process.on('SIGHUP', () => {
    // Before start completes there is nothing to reload yet (and SIGHUP's default would end us).
    if (!signalled) return logger.warn('SIGHUP during start ignored; send it again once the daemon runs');
    let level: string | undefined;
    try {
      level = loadConfig({ configPath: values.config, env: io.env }).log.level;
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
  });
  try {
    await daemon.start();
  } catch (err) {
    await exit.settle(); // Daemon.start stopped what it had started; the lock goes too
    throw err;
  }
  await notifier.ready(`HTTP ${config.http.host}:${daemon.http.port}` + (daemon.smtp ? `, SMTP ${daemon.smtp.port}` : ''));
  if (daemon.initialCredentials) {
    const c = daemon.initialCredentials;
    io.err(
      `\nFirst start: created account ${c.accountId} and an account-level API key:\n\n    ${c.apiKey}\n\n` +
        `It is shown only now and saved to ${c.file} (mode 0600).\n`,
    );
    await markInitialKeyShown(daemon.store);
  }
  return new Promise<number>((resolve) => {
    let stopping = false;
    const shutdown = (signal: string) => {
      if (stopping) return;
      stopping = true;
      logger.info({ signal }, 'shutting down');
      void notifier.stopping();
      void exit.shutdown(() => daemon.stop(), config.shutdown.graceMs).then(resolve);
    };
    signalled = shutdown;
    if (early.length > 0) shutdown(early[0]);
  });
}
