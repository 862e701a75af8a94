/**
 * Idle SMTP connections kept for the next message to the same destination, as Postfix's
 * scache does: a connection whose transaction ended cleanly waits here (at most `idleMs`,
 * at most `maxMessages` transactions over its life) until an attempt to the same destination
 * takes it. A destination key names the MX address, port, our source address and the TLS
 * level (destinationKey), so a connection is only ever reused for what it was opened for.
 *
 * The cache never talks SMTP: it holds connections and quits them. Whoever takes one checks it
 * (RSET, RFC 5321 4.1.1.5) before the next transaction; whoever gives one back decides that it
 * is clean (no error, no 421, no timeout). Once closed (shutdown), nothing is kept any more:
 * a connection given back then is quit at once.
 */

/** What the cache needs of a connection. */
export interface CacheableConnection {
  /** Transactions run over this connection so far. */
  readonly messages: number;
  /** False once the socket is gone (closed by the server, an error). */
  readonly usable: boolean;
  /** Resolves when the connection is gone, whoever closed it. */
  readonly closed: Promise<void>;
  /** QUIT (RFC 5321 4.1.1.10) with a bounded wait; resolves when the connection is gone. */
  quit(): Promise<void>;
}

export interface ConnectionCacheOptions {
  /** delivery.maxMessagesPerConnection: a connection that ran this many transactions is quit. */
  maxMessages: number;
  /** delivery.connectionIdleMs: an idle connection is quit after this long. */
  idleMs: number;
}

/**
 * What a kept connection is reused for. The TLS level (tls-policy.ts) is part of it: a plain-text
 * connection opened after STARTTLS failed (`none`) is never taken for an opportunistic one
 * (`may`), and neither for one that must be verified (`verify`, MTA-STS enforce), whose key also
 * names the MX host its certificate was checked against (one address may serve several names).
 */
export interface Destination {
  /** The MX host's IP address we connect to. */
  address: string;
  port: number;
  /** Our local address, as given to the connection (SessionOptions.sourceAddress); undefined lets the OS choose. */
  source?: string;
  /** The connection's TLS level (TlsLevel); `may` when absent. */
  tls?: string;
  /** The MX host name the certificate was checked for, for `verify` and `dane` only. */
  verifiedHost?: string;
}

export function destinationKey(d: Destination): string {
  const tls = d.tls === 'verify' || d.tls === 'dane' ? `${d.tls}:${d.verifiedHost ?? ''}` : (d.tls ?? 'may');
  return `${d.address}|${d.port}|${d.source ?? '*'}|${tls}`;
}

interface Idle<C> {
  conn: C;
  timer: NodeJS.Timeout;
}

export class ConnectionCache<C extends CacheableConnection> {
  private readonly idle = new Map<string, Idle<C>[]>();
  /** Quits started by the cache and not yet finished: close() waits for them. */
  private readonly quitting = new Set<Promise<void>>();
  private closing = false;

  constructor(private readonly o: ConnectionCacheOptions) {}

  /** Idle connections to every destination (for tests and logs). */
  get idleCount(): number {
    let n = 0;
    for (const list of this.idle.values()) n += list.length;
    return n;
  }

  /**
   * An idle connection to `key`, removed from the cache, or undefined. The most recently used
   * one first: it is the least likely to have been closed by the server meanwhile.
   */
  take(key: string): C | undefined {
    const list = this.idle.get(key);
    while (list && list.length > 0) {
      const entry = list.pop()!;
      clearTimeout(entry.timer);
      if (list.length === 0) this.idle.delete(key);
      if (entry.conn.usable) return entry.conn;
    }
    return undefined;
  }

  /**
   * A connection whose transaction ended cleanly: kept for the next message, or quit. A site's
   * own limit (`maxMessages`, from delivery.sites or the provider table) wins over the default.
   */
  keep(key: string, conn: C, maxMessages = this.o.maxMessages): void {
    if (this.closing || !conn.usable || conn.messages >= maxMessages) {
      this.quit(conn);
      return;
    }
    // Every way out of the idle list (take, closeIdle, remove) clears the timer first, so when it
    // fires the entry is still listed.
    const entry: Idle<C> = {
      conn,
      timer: setTimeout(() => {
        this.remove(key, entry);
        this.quit(conn);
      }, this.o.idleMs),
    };
    entry.timer.unref();
    const list = this.idle.get(key) ?? [];
    list.push(entry);
    this.idle.set(key, list);
    // A server ending the idle session (its own timeout, RFC 5321 4.5.3.2.7) frees the slot now.
    void conn.closed.then(() => this.remove(key, entry));
  }

  /**
   * The destination asked us to slow down (421, a rate-limit reply): every idle connection to
   * it is quit, so that the next attempts open fresh ones under the lowered concurrency.
   */
  closeIdle(key: string): void {
    const list = this.idle.get(key) ?? [];
    this.idle.delete(key);
    for (const entry of list) {
      clearTimeout(entry.timer);
      this.quit(entry.conn);
    }
  }

  /**
   * Shutdown: quit every idle connection and wait for them (each QUIT has a bounded wait), and
   * quit every connection given back from now on.
   */
  async close(): Promise<void> {
    this.closing = true;
    for (const key of [...this.idle.keys()]) this.closeIdle(key);
    while (this.quitting.size > 0) await Promise.allSettled([...this.quitting]);
  }

  private remove(key: string, entry: Idle<C>): void {
    clearTimeout(entry.timer);
    const list = this.idle.get(key);
    if (!list) return;
    const i = list.indexOf(entry);
    if (i >= 0) list.splice(i, 1);
    if (list.length === 0) this.idle.delete(key);
  }

  private quit(conn: C): void {
    const done = conn.quit().finally(() => this.quitting.delete(done));
    this.quitting.add(done);
  }
}
