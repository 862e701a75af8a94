/**
 * smtp-server (pinned in package.json) with the few hooks the listener needs and the library
 * does not offer. Everything that touches the library's connection internals is here:
 *
 *  - admission before a session exists: a refused connection gets one reply line in place of
 *    the greeting (RFC 5321 3.1) and is closed, without costing a session;
 *  - our replies keep their own RFC 3463 enhanced code (the library derives one from the basic
 *    code alone, 550 → 5.1.1 "no such mailbox", which would misname a policy refusal);
 *  - a hook before every command, so a draining listener can answer with 421 and close;
 *  - the idle timeout asked per session (short before AUTH, longer after);
 *  - the replies to a pipelined group written together (coalesceReplies);
 *  - the pause before the greeting ours to choose (the library waits a fixed 100 ms).
 */
import type net from 'node:net';
import { SMTPServer, type SMTPServerOptions } from 'smtp-server';
import { SMTPConnection, type SMTPConnectionOptions } from 'smtp-server/lib/smtp-connection.js';
import { ENHANCED_PREFIX, replyLine, type SmtpReplyError } from './replies.js';

/** How long a refused connection may stay open for its reply to reach the client. */
const REFUSAL_LINGER_MS = 2000;

export interface WireHooks<T> {
  /** A new connection from `address` (see clientAddress): admit it with a value, or refuse it. */
  admit(address: string): { admitted: T } | { refused: SmtpReplyError };
  /** The session of an admitted connection exists (before its greeting). */
  started(session: WireSession, admitted: T): void;
  /** Before each command: a 421 reply answers it instead and closes the session. */
  refuseCommand(session: WireSession, verb: string): SmtpReplyError | null;
  /** The idle timeout of the session as it is now. */
  idleTimeoutMs(session: WireSession): number;
  /**
   * The server ended the session (QUIT answered, a 421 sent): nothing more is read from it. Its
   * socket goes when the client closes its side, or at the library's half-close deadline (5 s).
   */
  closing(session: WireSession): void;
}

/** What the listener may do with one session, without knowing the library. */
export class WireSession {
  constructor(
    private readonly conn: SMTPConnection,
    readonly address: string,
  ) {}

  get id(): string {
    return this.conn.id;
  }

  /** Receiving a message, deciding on one, or a command handler has not answered yet. */
  get busy(): boolean {
    return Boolean(this.conn._dataStream) || this.conn._handlerPending;
  }

  get closing(): boolean {
    return this.conn._closing || this.conn._closed;
  }

  /** Sends a reply now; a 421 also closes the session (RFC 5321 3.8). */
  reply(err: SmtpReplyError): void {
    if (this.closing) return;
    this.conn.send(err.responseCode, err.message);
  }

  /** Applies a new idle timeout to the running timer (it is re-armed with idleTimeoutMs later). */
  setIdleTimeout(ms: number): void {
    this.conn._socket.setTimeout(ms);
  }

  destroy(): void {
    if (!this.conn._socket.destroyed) this.conn._socket.destroy();
  }
}

export class WireServer<T> extends SMTPServer {
  private readonly refusedSockets = new Set<net.Socket>();

  /**
   * greetingDelayMs: how long a new connection waits for its 220 greeting. smtp-server waits a
   * fixed 100 ms to catch early talkers (a client that writes before the greeting, which RFC 5321
   * 4.3.1 tells it to wait for, gets 421 and is dropped): worth it on port 25, where spam bots do
   * that, but on submission it only made every message of a client that connects per message
   * 100 ms slower (and capped 20 such clients at 200 messages/s).
   */
  constructor(
    options: SMTPServerOptions,
    private readonly hooks: WireHooks<T>,
    private readonly greetingDelayMs: number,
  ) {
    super(options);
  }

  /** Replaces SMTPServer.connect (same four steps), with admission first and the hooks wired in. */
  override connect(socket: net.Socket, socketOptions?: SMTPConnectionOptions | null): void {
    const address = clientAddress(socket.remoteAddress);
    const verdict = this.hooks.admit(address);
    if ('refused' in verdict) return this.refuse(socket, verdict.refused);
    const conn = new SMTPConnection(this, socket, socketOptions);
    const session = new WireSession(conn, address);
    this.wire(conn, session);
    this.connections.add(conn);
    conn.on('error', (err: Error) => this._onError(err));
    conn.on('connect', (data) => this._onClientConnect(data));
    this.hooks.started(session, verdict.admitted);
    this.init(conn);
  }

  /** SMTPConnection.init with our pause before the greeting (the library's is a fixed 100 ms). */
  private init(conn: SMTPConnection): void {
    conn._setListeners(() => {
      const { maxClients } = this.options;
      if (maxClients && this.connections.size > maxClients) {
        return conn.send(421, `${conn.name} Too many connected clients, try again in a moment`, false);
      }
      // Data before the greeting meets the library's own check meanwhile (421 "You talk too soon").
      if (this.greetingDelayMs <= 0) return conn.connectionReady();
      // Unref'd as the library's: a pending greeting does not keep the process alive.
      setTimeout(() => conn.connectionReady(), this.greetingDelayMs).unref();
    });
  }

  /** Ends the refused connections that are still waiting for their client to hang up. */
  destroyRefused(): void {
    for (const s of this.refusedSockets) s.destroy();
    this.refusedSockets.clear();
  }

  private refuse(socket: net.Socket, reply: SmtpReplyError): void {
    this.refusedSockets.add(socket);
    socket.on('error', () => undefined);
    const timer = setTimeout(() => socket.destroy(), REFUSAL_LINGER_MS);
    timer.unref();
    socket.once('close', () => {
      clearTimeout(timer);
      this.refusedSockets.delete(socket);
    });
    socket.end(replyLine(reply));
    socket.resume(); // read (and drop) whatever comes, so the client's FIN is seen
  }

  private wire(conn: SMTPConnection, session: WireSession): void {
    coalesceReplies(conn);
    const send = keepOwnEnhancedCode(conn);

    const onCommand = conn._onCommand.bind(conn);
    conn._onCommand = (command, callback) => {
      // Before the greeting and during a TLS handshake the library answers (or drops) itself.
      if (conn._ready && !conn._upgrading) {
        // A line in the middle of an AUTH exchange is a credential, not a command (RFC 4954 4).
        const verb = conn._nextHandler ? 'AUTH' : command.toString('latin1').split(' ', 1)[0].toUpperCase();
        const refusal = this.hooks.refuseCommand(session, verb);
        // Like the library's own 421s: no callback, the parser stops with the session.
        if (refusal) return send(refusal.responseCode, refusal.message, false);
      }
      return onCommand(command, callback);
    };

    conn._armTimeout = (socket = conn._socket) => {
      socket.setTimeout(this.hooks.idleTimeoutMs(session), () => conn._onTimeout());
    };

    const close = conn.close.bind(conn);
    conn.close = () => {
      const first = !conn._closing;
      close();
      if (first) this.hooks.closing(session);
    };
  }
}

/**
 * With ENHANCEDSTATUSCODES announced the library puts a code derived from the basic code in
 * front of every reply; a reply text that already starts with one of ours (SMTP_REPLIES, the
 * catalogue) is sent as it is. Returns the library's own send.
 */
function keepOwnEnhancedCode(conn: SMTPConnection): SMTPConnection['send'] {
  const send = conn.send.bind(conn);
  conn.send = (code, data, ctx) => (typeof data === 'string' && ENHANCED_PREFIX.test(data) ? send(code, data, false) : send(code, data, ctx));
  return send;
}

/** The replies that may wait for the others of their group: EHLO's, MAIL's, RCPT's, RSET's and the end of data's (250) and DATA's (354). */
const GROUPED_REPLIES = new Set([250, 354]);

/**
 * A pipelining client (RFC 2920) sends MAIL FROM, RCPT TO and DATA in one write and waits for
 * all three replies, which smtp-server wrote one socket write each: on TLS a record and a system
 * call apiece, whose loopback delivery runs the reader's TCP work in the writer's call (about
 * 30 µs each here; bench/RESULTS.md, SMTP intake's profile). Here the replies written in one
 * burst of the event loop (a chunk of pipelined commands whose handlers answer without waiting
 * for I/O) leave in one write: the socket is corked at the first such reply and uncorked when
 * the burst's microtasks are done (process.nextTick), as Postfix flushes its replies before it
 * waits for more input (RFC 2920 3.2's "SHOULD" for servers). Only 250 and 354 wait, and never
 * past that turn: any other reply (STARTTLS's 220, AUTH's 334 and 235, an error, a 421 that
 * closes) first sends what waits, so nothing is reordered or held across a state change.
 * Wraps the library's own send, under every other wrapper, so its internal replies pass here too.
 */
function coalesceReplies(conn: SMTPConnection): void {
  const send = conn.send.bind(conn);
  let corked: SMTPConnection['_socket'] | null = null;
  const flush = () => {
    const socket = corked;
    corked = null;
    socket?.uncork();
  };
  conn.send = (code, data, ctx) => {
    if (!GROUPED_REPLIES.has(code) || corked !== conn._socket) flush();
    const socket = conn._socket;
    if (GROUPED_REPLIES.has(code) && corked === null && socket && !socket.destroyed) {
      socket.cork();
      corked = socket;
      process.nextTick(flush);
    }
    send(code, data, ctx);
  };
}

/**
 * The address the per-address limits count: IPv4 as is (also when a dual-stack listener reports
 * it as ::ffff:a.b.c.d), IPv6 by its /64, since one host is usually given a whole /64 (RFC 6177)
 * and could otherwise open each connection from another address.
 */
export function clientAddress(raw: string | undefined): string {
  const a = (raw ?? '').trim().toLowerCase().replace(/^::ffff:(?=\d+\.\d+\.\d+\.\d+$)/, '');
  if (!a.includes(':')) return a;
  const [head, tail] = a.split('::');
  const groups = (s: string | undefined) => (s ? s.split(':') : []);
  const h = groups(head);
  const t = tail === undefined ? [] : groups(tail);
  const width = (list: string[]) => list.reduce((n, g) => n + (g.includes('.') ? 2 : 1), 0);
  const full = [...h, ...Array<string>(Math.max(0, 8 - width(h) - width(t))).fill('0'), ...t];
  return `${full.slice(0, 4).map((g) => (parseInt(g, 16) || 0).toString(16)).join(':')}::/64`;
}
