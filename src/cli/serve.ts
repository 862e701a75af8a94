/** postrider serve: runs the daemon until SIGTERM/SIGINT. The only place signals are handled. */
import { loadConfig } from '../config/load.js';
import { Daemon } from '../daemon.js';
import { createLogger } from '../log/logger.js';
import { SdNotifier } from '../ops/sd-notify.js';
import { isLmdbCommitFailure } from '../store/env.js';
import { parse, type CommandIo } from './args.js';

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
  // lmdb-js leaves one internal promise of a failed commit (a full disk) unhandled
  // (kriszyp/lmdb-js#368), which would end the process. Every write of that commit has already
  // failed for its caller (HTTP 507, SMTP 452), so that one is dropped; any other unhandled
  // rejection still ends the process as Node's default would.
  process.on('unhandledRejection', (reason) => {
    if (!isLmdbCommitFailure(reason)) throw reason;
    reason.commitError.catch(() => undefined);
  });
  const daemon = new Daemon(config, logger);
  // Type=notify (systemd/postrider.service): systemd counts the unit started only at READY=1.
  const notifier = new SdNotifier({ env: io.env, onError: (err) => logger.warn({ err }, 'sd_notify failed') });
  await daemon.start();
  await notifier.ready(`HTTP ${config.http.host}:${daemon.http.port}` + (daemon.smtp ? `, SMTP ${daemon.smtp.port}` : ''));
  if (daemon.initialCredentials) {
    const c = daemon.initialCredentials;
    io.err(
      `\nFirst start: created account ${c.accountId} and an account-level API key:\n\n    ${c.apiKey}\n\n` +
        `It is shown only now and saved to ${c.file} (mode 0600).\n`,
    );
  }
  return new Promise<number>((resolve) => {
    let stopping = false;
    const shutdown = (signal: string) => {
      if (stopping) return;
      stopping = true;
      logger.info({ signal }, 'shutting down');
      void notifier.stopping();
      const deadline = setTimeout(() => {
        logger.error('shutdown deadline passed; exiting');
        resolve(1);
      }, config.shutdown.graceMs + 5_000);
      deadline.unref();
      daemon.stop().then(
        () => resolve(0),
        (err) => {
          logger.error({ err }, 'shutdown failed');
          resolve(1);
        },
      );
    };
    // SIGHUP: re-read the configuration's reloadable parts (log level, TLS certificate files).
    process.on('SIGHUP', () => {
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
    process.once('SIGTERM', () => shutdown('SIGTERM'));
    process.once('SIGINT', () => shutdown('SIGINT'));
  });
}
