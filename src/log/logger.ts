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

/**
 * What is censored. Every path names a field inside a top-level field (none is a single name), so
 * no path reaches a top-level string, number or boolean (skipRedactionOfScalars relies on it).
 */
export const REDACT = {
  paths: ['req.headers.authorization', '*.password', '*.token', '*.privateKeyPem', '*.rsaCompanion.privateKeyPem', '*.apiKey'],
  censor: '[redacted]',
};

/**
 * pino hands every top-level field of every line (and of every child's bindings) to its
 * redactor, and @pinojs/redact parses each of its paths again on every call, also for a string,
 * number or boolean, which no path can reach (REDACT): about 15 KB of garbage per HTTP request
 * line (bench/alloc.mjs). Such a value is written here as the redactor writes it
 * (JSON.stringify, pino's serializer); objects still go through the redactor. The redactors are
 * pino's per-field stringifiers (pino.symbols), which child loggers share with their root.
 */
function skipRedactionOfScalars(logger: Logger): Logger {
  type Stringify = (value: unknown, safe?: unknown) => string | undefined;
  const stringifiers = (logger as unknown as Record<symbol, Record<string | symbol, Stringify> | undefined>)[pino.symbols.stringifiersSym];
  // A pino that keeps its redactors elsewhere is left as it is: slower, never less censored.
  if (typeof stringifiers !== 'object' || stringifiers === null) return logger;
  for (const key of Reflect.ownKeys(stringifiers)) {
    const redact = stringifiers[key]!;
    if (key === pino.symbols.redactFmtSym || typeof redact !== 'function') continue;
    stringifiers[key] = (value, safe) => {
      const t = typeof value;
      return t === 'string' || t === 'number' || t === 'boolean' ? JSON.stringify(value) : redact(value, safe);
    };
  }
  return logger;
}

export function createLogger(opts: { level: string; destination?: DestinationStream }): Logger {
  const own = opts.destination ? undefined : stdout();
  const logger = pino(
    {
      level: opts.level,
      base: { service: 'postrider' },
      timestamp: pino.stdTimeFunctions.isoTime,
      redact: REDACT,
      hooks: {
        logMethod(args, method, level) {
          method.apply(this, args);
          if (own && level >= WARN) own.flush();
        },
      },
    },
    opts.destination ?? own,
  );
  return skipRedactionOfScalars(logger);
}
