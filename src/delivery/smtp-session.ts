/**
 * One SMTP session with one target (nodemailer's SMTPConnection), open from the greeting to
 * QUIT and possibly over several transactions (connection-cache.ts): opening it (TCP, greeting,
 * EHLO, STARTTLS when offered), RSET before a reused one's next transaction (awaited, or written
 * ahead of the transaction's commands when the server pipelines), QUIT. The mail transaction
 * itself is smtp-transaction.ts.
 *
 * TLS follows the connection's level (tls-policy.ts): opportunistic STARTTLS when offered,
 * plain text (the fallback after a failed STARTTLS, which smtp-client.ts decides), or STARTTLS
 * required with a verified certificate (MTA-STS enforce). A failed STARTTLS or handshake is a
 * failure of this connection (phase "tls").
 */
import type { TLSSocket } from 'node:tls';
import { verifyPeer } from '../dane/index.js';
import type { TlsDetail } from '../domain/delivery-result.js';
import type { AbortLike } from './attempt-abort.js';
import type { NodemailerError } from 'nodemailer/lib/errors.js';
import SMTPConnection from 'nodemailer/lib/smtp-connection/index.js';
import type { CacheableConnection } from './connection-cache.js';
import { installDataWriter } from './smtp-data.js';
import { installSmtpUtf8, offeredExtensions } from './mail-extensions.js';
import { sessionFailure, type SessionFailure, type Target } from './smtp-results.js';
import { connectionTls, sniName, tlsDetailOf, type TlsLevel } from './tls-policy.js';

export interface SmtpTimeouts {
  connectMs: number;
  /** Greeting, EHLO and the STARTTLS handshake (RFC 5321 4.5.3.2.1: 5 minutes). */
  greetingMs: number;
  /** Each command: MAIL, RCPT, DATA, RSET (RFC 5321 4.5.3.2.2-4: 5 minutes, 2 for DATA). */
  commandMs: number;
  /** Sending the message and waiting for the final reply (RFC 5321 4.5.3.2.5-6: 3 + 10 minutes). */
  dataMs: number;
}

export interface SessionOptions {
  port: number;
  /** Our EHLO name (config.hostname), RFC 5321 4.1.1.1. */
  heloName: string;
  /** Our local address; undefined lets the OS choose. */
  sourceAddress?: string;
  timeouts: SmtpTimeouts;
  signal?: AbortLike;
  /** The connection's TLS level (default `may`), with why it is plain text for `none`. */
  tlsLevel?: TlsLevel;
  plainReason?: string;
  /** Trusted roots for the certificate check (node's plus the operator's extra CA); node's when absent. */
  ca?: string[];
}

/** The SMTPConnection internals a pipelined RSET uses (nodemailer 10.x). */
interface CommandInternals {
  _sendCommand(command: string): void;
  _responseActions: Array<(reply: string) => void>;
  _supportedExtensions?: string[];
  _socket?: { cork(): void; uncork(): void };
}

/** How long to wait for the reply to QUIT before closing the socket ourselves. */
const QUIT_WAIT_MS = 5000;

export type Opened = { ok: true; session: SmtpSession } | { ok: false; failure: SessionFailure };

export class SmtpSession implements CacheableConnection {
  messages = 0;
  /** Set by any error the connection reports: such a connection is never reused. */
  private failed = false;
  readonly closed: Promise<void>;
  /** The message goes out in one framed write (smtp-data.ts) rather than through nodemailer's stream. */
  readonly framedData: boolean;
  /** SMTPUTF8 goes on the next MAIL FROM (set by each transaction, mail-extensions.ts). */
  smtpUtf8 = false;

  constructor(
    readonly conn: SMTPConnection,
    readonly target: Target,
    /** Why the session runs in plain text when it was opened without STARTTLS (level `none`). */
    private readonly plainReason?: string,
  ) {
    this.framedData = installDataWriter(conn);
    installSmtpUtf8(conn, () => this.smtpUtf8);
    // The listener stays for the connection's life: an 'error' without a listener would throw.
    conn.on('error', () => {
      this.failed = true;
    });
    this.closed = new Promise((resolve) => conn.once('end', () => resolve()));
  }

  get usable(): boolean {
    return !this.failed && !this.conn.destroyed;
  }

  /** The keywords of the server's EHLO reply; undefined when nodemailer keeps none. */
  get extensions(): readonly string[] | undefined {
    return offeredExtensions(this.conn);
  }

  get tls(): boolean {
    return this.conn.secure;
  }

  /** Protocol and cipher, or why the session is not encrypted. */
  get tlsDetail(): TlsDetail {
    const detail = tlsDetailOf(this.conn.secure ? this.conn._socket : undefined, this.plainReason);
    return this.daneVerdict ? { ...detail, dane: this.daneVerdict } : detail;
  }

  /** DANE's verdict when the host's TLSA records made TLS mandatory (set by openSession). */
  daneVerdict: string | undefined;

  /** Marks the session as not to be reused (a 421, a timeout, a broken transaction). */
  spoil(): void {
    this.failed = true;
  }

  /**
   * RSET before the next transaction on a kept connection (RFC 5321 4.1.1.5). False when the
   * server closed it meanwhile, refused RSET or did not answer in time: the caller opens a
   * new connection instead, and this one is closed.
   */
  reset(o: { commandMs: number; signal?: AbortLike }): Promise<boolean> {
    return new Promise((resolve) => {
      let settled = false;
      const finish = (ok: boolean) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        this.conn.off('end', onEnd);
        o.signal?.removeEventListener('abort', onEnd);
        if (!ok) this.close();
        resolve(ok);
      };
      const onEnd = () => finish(false);
      const timer = setTimeout(onEnd, o.commandMs);
      this.conn.once('end', onEnd);
      o.signal?.addEventListener('abort', onEnd, { once: true });
      if (!this.usable || o.signal?.aborted) return finish(false);
      this.conn.reset((err) => finish(!err && this.usable));
    });
  }

  /**
   * The server offered PIPELINING (RFC 2920) and this nodemailer lets us queue a command of our
   * own: RSET may then go out in one write with the next transaction's MAIL FROM (writeReset).
   */
  get pipelinesReset(): boolean {
    const c = this.conn as unknown as CommandInternals;
    return typeof c._sendCommand === 'function' && Array.isArray(c._responseActions) && Array.isArray(c._supportedExtensions) && c._supportedExtensions.includes('PIPELINING');
  }

  /**
   * RSET written without waiting for its reply (RFC 2920 3.1: RSET may appear anywhere in a
   * pipelined group), to be followed in the same corked write by the next transaction's
   * commands. Its reply is the first one read after it, before any of the transaction's:
   * `onReply(true)` for a 2xx; anything else closes the session before the message could follow
   * (it goes only after the 354 reply, which comes later) and calls `onReply(false)`.
   */
  writeReset(onReply: (ok: boolean) => void): void {
    const c = this.conn as unknown as CommandInternals;
    // nodemailer's reset() would also clear its envelope when the reply comes, by then the
    // envelope of the transaction pipelined behind it; ours leaves that alone.
    c._sendCommand('RSET');
    c._responseActions.push((reply) => {
      const ok = reply.charAt(0) === '2';
      if (!ok) this.close();
      onReply(ok);
    });
  }

  /** Holds the socket's writes until uncork(): what is written meanwhile leaves in one write. */
  cork(): void {
    (this.conn as unknown as CommandInternals)._socket?.cork();
  }

  uncork(): void {
    (this.conn as unknown as CommandInternals)._socket?.uncork();
  }

  /** QUIT (RFC 5321 4.1.1.10), and close anyway if the server does not answer it. */
  quit(): Promise<void> {
    if (this.conn.destroyed) return Promise.resolve();
    try {
      this.conn.quit();
    } catch {
      this.close();
      return this.closed;
    }
    const timer = setTimeout(() => this.conn.close(), QUIT_WAIT_MS);
    timer.unref();
    return this.closed.finally(() => clearTimeout(timer));
  }

  /** Drops the connection without QUIT (an error, an abort). */
  close(): void {
    this.failed = true;
    this.conn.close();
  }
}

/** TCP connect, greeting, EHLO and STARTTLS as the TLS level says. */
export function openSession(target: Target, o: SessionOptions): Promise<Opened> {
  return new Promise((resolve) => {
    const t = o.timeouts;
    const level = o.tlsLevel ?? 'may';
    const conn = new SMTPConnection({
      host: target.address,
      port: o.port,
      localAddress: o.sourceAddress,
      name: o.heloName,
      // SNI with the MX name (RFC 6066 3); never an IP address.
      servername: sniName(target.host),
      connectionTimeout: t.connectMs,
      greetingTimeout: t.greetingMs,
      socketTimeout: t.commandMs,
      ...connectionTls({ level, host: target.host, ca: o.ca, servername: target.dane?.kind === 'dane' ? target.dane.tlsaBase : undefined }),
      logger: false,
    });
    const session = new SmtpSession(conn, target, level === 'none' ? (o.plainReason ?? 'plain text by policy') : undefined);
    let settled = false;
    /** politely: the connection works, end it with QUIT (RFC 5321 4.1.1.10) rather than dropping it. */
    const finish = (value: Opened, politely = false) => {
      if (settled) return;
      settled = true;
      o.signal?.removeEventListener('abort', onAbort);
      if (!value.ok && politely) {
        session.spoil();
        void session.quit();
      } else if (!value.ok) session.close();
      resolve(value);
    };
    const onAbort = () => finish({ ok: false, failure: abortedFailure(target) });
    conn.on('error', (err: NodemailerError) => finish({ ok: false, failure: sessionFailure(err, target, conn.upgrading === true) }));
    o.signal?.addEventListener('abort', onAbort, { once: true });
    conn.connect((err) => {
      if (err) return finish({ ok: false, failure: sessionFailure(err, target, conn.upgrading === true) });
      const refused = level === 'dane' ? daneRefusal(session) : undefined;
      // A DANE refusal is of the certificate, not the SMTP session: QUIT before closing (RFC 7672 does not forbid it).
      finish(refused ? { ok: false, failure: refused } : { ok: true, session }, refused !== undefined);
    });
  });
}

/**
 * RFC 7672 2.2: after the handshake, before MAIL FROM, the peer's chain must match the host's
 * TLSA records (or, for an RRset without usable records, the session just be encrypted). A
 * refusal is a TLS failure of this host; the session is ended with QUIT by the caller.
 */
function daneRefusal(session: SmtpSession): SessionFailure | undefined {
  const dane = session.target.dane;
  if (!dane) return undefined;
  const socket = session.conn.secure ? (session.conn._socket as TLSSocket) : undefined;
  const verdict = socket ? verifyPeer(dane, socket) : { ok: false, reason: 'DANE: TLSA records exist but the connection is not encrypted' };
  if (!verdict.ok) return { target: session.target, phase: 'tls', reply: { text: verdict.reason } };
  session.daneVerdict = verdict.reason;
  return undefined;
}

export function abortedFailure(target: Target | undefined): SessionFailure {
  return {
    target: target ?? { host: '', address: '' },
    phase: 'connect',
    reply: { text: target ? 'delivery attempt aborted (shutdown or attempt deadline)' : 'no MX address to connect to' },
  };
}
