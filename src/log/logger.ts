/**
 * pino JSON logs to stdout (journald under systemd). Credentials never reach the log:
 * authorization headers and anything named like a secret are redacted.
 */
import { pino, type Logger, type DestinationStream } from 'pino';

export type { Logger };

/**
 * stdout is written in blocks of at least BUFFER_BYTES, or every FLUSH_MS when fewer lines come:
 * a busy daemon writes one request line per request, and one write(2) per line cost the main
 * thread more than forming the line. Warnings and errors are written at once, and what is
 * buffered is written synchronously when the process exits (pino's exit handler).
 */
const BUFFER_BYTES = 4096;
const FLUSH_MS = 200;
const WARN = 40;

function stdout(): DestinationStream & { flush(): void } {
  return pino.destination({ dest: 1, sync: false, minLength: BUFFER_BYTES, periodicFlush: FLUSH_MS });
}

export function createLogger(opts: { level: string; destination?: DestinationStream }): Logger {
  const own = opts.destination ? undefined : stdout();
  return pino(
    {
      level: opts.level,
      base: { service: 'postrider' },
      timestamp: pino.stdTimeFunctions.isoTime,
      redact: {
        paths: ['req.headers.authorization', '*.password', '*.token', '*.privateKeyPem', '*.rsaCompanion.privateKeyPem', '*.apiKey'],
        censor: '[redacted]',
      },
      hooks: {
        logMethod(args, method, level) {
          method.apply(this, args);
          if (own && level >= WARN) own.flush();
        },
      },
    },
    opts.destination ?? own,
  );
}
