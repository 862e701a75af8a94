/**
 * A listener that cannot bind its port (in use, not allowed, no such local address) is a
 * problem of the configuration, not a bug: `postrider serve` prints one line that says which
 * listener, which address and which setting to change, and exits with EX_CONFIG (78) instead of
 * a stack trace (main.ts).
 */
export class ListenProblem extends Error {
  readonly exitCode = 78;

  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'ListenProblem';
  }
}

export interface ListenTarget {
  /** "HTTP API", "SMTP submission", … */
  what: string;
  host: string;
  port: number;
  /** The configuration key and its variable, e.g. "http.port (POSTRIDER_HTTP_PORT)". */
  setting: string;
}

const REASONS: Record<string, string> = {
  EADDRINUSE: 'is already in use (another postrider, or another program, listens there)',
  EACCES: 'may not be bound by this user (ports below 1024 need CAP_NET_BIND_SERVICE)',
  EADDRNOTAVAIL: 'is not an address of this machine',
};

/** The ListenProblem for a bind error, or the error itself when it is something else. */
export function listenFailure(err: unknown, t: ListenTarget): unknown {
  const code = (err as { code?: unknown })?.code;
  const reason = typeof code === 'string' ? REASONS[code] : undefined;
  if (!reason) return err;
  const where = t.host.includes(':') ? `[${t.host}]:${t.port}` : `${t.host}:${t.port}`;
  return new ListenProblem(`${t.what} cannot listen on ${where}: the address ${reason}; change ${t.setting}`, { cause: err });
}
