/**
 * pino JSON logs to stdout (journald under systemd). Credentials never reach the log:
 * authorization headers and anything named like a secret are redacted.
 */
import { pino, type Logger, type DestinationStream } from 'pino';

export type { Logger };

export function createLogger(opts: { level: string; destination?: DestinationStream }): Logger {
  return pino(
    {
      level: opts.level,
      base: { service: 'postrider' },
      timestamp: pino.stdTimeFunctions.isoTime,
      redact: {
        paths: ['req.headers.authorization', '*.password', '*.token', '*.privateKeyPem', '*.apiKey'],
        censor: '[redacted]',
      },
    },
    opts.destination ?? pino.destination({ fd: 1, sync: false }),
  );
}
