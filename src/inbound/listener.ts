/**
 * The inbound SMTP listener (RFC 5321 server, no AUTH; port 25 in production). Two kinds of
 * mail arrive here: mail for the addresses of inbound routes (issue 33; the MX of a routed
 * domain points at this daemon's host name) and mail for the return-path hosts
 * (`<returnPathLabel>.<domain>`, domain/return-path.ts): asynchronous bounces, feedback reports
 * and List-Unsubscribe mails. Which recipient is accepted and what becomes of a message is
 * InboundReception's business (reception.ts), one verb per command; every other recipient gets
 * 550 5.1.1 at RCPT, so the listener is never a relay. A routed message is committed before the
 * 250 (RFC 5321 6.1), and processed after it.
 *
 * Abuse defences as the submission listener's (smtp/sessions.ts): connection caps in all and per
 * client address (an IPv6 /64 as one), the idle timeout and a deadline for the whole session,
 * a size limit advertised in EHLO SIZE (RFC 1870) past which the message is read and dropped,
 * and a drain on shutdown. STARTTLS (RFC 3207) is offered with the submission listener's
 * certificate.
 */
import { listenFailure } from '../domain/listen-problem.js';
import { underDeadline } from '../domain/request-deadline.js';
import type net from 'node:net';
import type { Readable } from 'node:stream';
import type { Logger } from 'pino';
import type { SMTPServerAddress, SMTPServerSession } from 'smtp-server';
import type { Config } from '../config/schema.js';
import type { GateTicket } from '../smtp/connection-gate.js';
import { readMessage } from '../smtp/message-reader.js';
import { internalReply, smtpOk, smtpReply, toSmtpError, type SmtpReplyError } from '../smtp/replies.js';
import { Sessions } from '../smtp/sessions.js';
import { loadTls } from '../smtp/tls.js';
import { WireServer } from '../smtp/wire-server.js';
import type { Acceptance, InboundReception } from './reception.js';

const MAX_RECIPIENTS = 20;

/** The settings the inbound listener reads: its address and limits, the certificate (smtp.tls*), the drain's grace. */
export type InboundSettings = Pick<Config, 'inbound' | 'smtp' | 'hostname' | 'dataDir' | 'shutdown'>;

type Reply = (err?: Error | null, message?: string) => void;

/** The recipients a session's current transaction accepted, and why. */
interface Transaction {
  number: number;
  accepted: Map<string, Acceptance>;
}

export class InboundListener {
  private server: WireServer<GateTicket> | null = null;
  private boundPort = 0;
  private readonly sessions: Sessions;
  private readonly inFlight = new Set<Promise<unknown>>();
  private readonly transactions = new Map<string, Transaction>();

  /** requestDeadlineMs: how long RCPT and DATA wait for any one store call (domain/request-deadline.ts): 451 4.3.0 after it. */
  constructor(private readonly deps: { config: InboundSettings; reception: Pick<InboundReception, 'accept' | 'receive'>; logger: Logger; requestDeadlineMs?: number }) {
    const inbound = deps.config.inbound;
    this.sessions = new Sessions({
      maxConnections: inbound.maxConnections,
      maxConnectionsPerAddress: inbound.maxConnectionsPerAddress,
      authenticatedReserve: 0,
      authTimeoutMs: inbound.sessionTimeoutMs,
      idleTimeoutMs: inbound.idleTimeoutMs,
      withoutAuth: { sessionDeadlineMs: inbound.sessionTimeoutMs },
    });
  }

  async start(): Promise<void> {
    const { config } = this.deps;
    const server = await this.create();
    this.boundPort = await new Promise<number>((resolve, reject) => {
      const fail = (err: unknown) =>
        reject(listenFailure(err, { what: 'Inbound (routes, bounces and reports)', host: config.inbound.host, port: config.inbound.port, setting: 'inbound.host / inbound.port' }));
      server.server.once('error', fail);
      server.listen(config.inbound.port, config.inbound.host, () => {
        server.server.off('error', fail);
        resolve((server.server.address() as net.AddressInfo).port);
      });
    });
    this.server = server;
    this.deps.logger.info({ port: this.boundPort }, 'inbound listening');
  }

  /** Stops accepting, lets messages being received or committed get their reply (within shutdown.graceMs), closes. */
  async stop(): Promise<void> {
    const server = this.server;
    this.server = null;
    if (!server) return;
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    await this.sessions.drain(this.deps.config.shutdown.graceMs);
    await Promise.allSettled([...this.inFlight]);
    server.destroyRefused();
    await closed;
  }

  get port(): number {
    return this.boundPort;
  }

  get listening(): boolean {
    return this.server?.server.listening ?? false;
  }

  private async create(): Promise<WireServer<GateTicket>> {
    const { config } = this.deps;
    const tls = await loadTls({ dataDir: config.dataDir, certFile: config.smtp.tlsCert, keyFile: config.smtp.tlsKey, hostname: config.hostname });
    const server = new WireServer<GateTicket>(
      {
        key: tls.key,
        cert: tls.cert,
        name: config.hostname,
        // smtp-server writes "220 <name> ESMTP " before the banner.
        banner: 'postrider',
        // RFC 2034: our replies carry RFC 3463 codes, so the extension is announced (the library hides it by default).
        hideENHANCEDSTATUSCODES: false,
        disabledCommands: ['AUTH'],
        authOptional: true,
        size: config.inbound.maxMessageSize,
        // We answer oversized messages ourselves (onData), with our enhanced code.
        rejectOversized: false,
        disableReverseLookup: true,
        // Admission is ours (sessions.ts); this only bounds TLS handshakes before a session exists.
        maxClients: config.inbound.maxConnections,
        socketTimeout: config.inbound.idleTimeoutMs,
        // Backstop only: stop() ends every connection itself within shutdown.graceMs.
        closeTimeout: config.shutdown.graceMs + 5000,
        logger: false,
        onRcptTo: (address, session, cb) => this.onRcptTo(address, session, cb),
        onData: (stream, session, cb) => this.onData(stream, session, cb),
        onClose: (session) => {
          this.transactions.delete(session.id);
          this.sessions.closed(session.id);
        },
      },
      this.sessions,
      config.inbound.greetingDelayMs,
    );
    server.on('error', (err) => this.deps.logger.warn({ err }, 'inbound connection error'));
    return server;
  }

  /** The transaction of the session's current MAIL FROM (smtp-server counts them in session.transaction). */
  private transaction(session: SMTPServerSession): Transaction {
    const t = this.transactions.get(session.id);
    if (t && t.number === session.transaction) return t;
    const fresh = { number: session.transaction, accepted: new Map<string, Acceptance>() };
    this.transactions.set(session.id, fresh);
    return fresh;
  }

  private onRcptTo(address: SMTPServerAddress, session: SMTPServerSession, cb: (err?: Error | null) => void): void {
    if (session.envelope.rcptTo.length >= MAX_RECIPIENTS) return cb(smtpReply('tooManyRecipients', `at most ${MAX_RECIPIENTS} per message`));
    // The check reads the store (the routes, the message a bounce address names): the reply waits for it.
    underDeadline(this.deps.requestDeadlineMs ?? 0, () => this.deps.reception.accept(address.address)).then(
      (acceptance) => {
        if (!acceptance) return cb(smtpReply('noSuchMailbox'));
        this.transaction(session).accepted.set(address.address, acceptance);
        cb(null);
      },
      (err: unknown) => this.fail(cb, err, 'inbound recipient check failed'),
    );
  }

  private onData(stream: Readable, session: SMTPServerSession, cb: Reply): void {
    const limit = this.deps.config.inbound.maxMessageSize;
    const reply: Reply = (err, message) => {
      cb(err, message);
      this.sessions.afterTransaction(session.id);
    };
    const accepted = this.transaction(session).accepted;
    const work = readMessage(stream, limit)
      .then(async (m) => {
        if ('oversized' in m) return reply(smtpReply('messageTooLarge', `the limit is ${limit} bytes`));
        if ('disconnected' in m) return this.deps.logger.info({ ip: session.remoteAddress }, 'inbound client closed the connection during DATA; nothing kept');
        const recipients = session.envelope.rcptTo.flatMap((r) => {
          const acceptance = accepted.get(r.address);
          return acceptance ? [{ address: r.address, acceptance }] : [];
        });
        const mailFrom = session.envelope.mailFrom ? session.envelope.mailFrom.address : '';
        const reception = { mailFrom, recipients, raw: m.raw, clientAddress: session.remoteAddress, helo: session.hostNameAppearsAs, receivedAt: new Date() };
        const res = await underDeadline(this.deps.requestDeadlineMs ?? 0, () => this.deps.reception.receive(reception));
        this.deps.logger.info({ event: 'inbound', messageIds: res.messageIds, ...res.report, ip: session.remoteAddress }, 'inbound message');
        reply(null, smtpOk('received'));
      })
      // A store fault: 451 so the sender keeps the message and tries again.
      .catch((err: unknown) => this.fail(reply, err, 'inbound processing failed'));
    this.inFlight.add(work);
    void work.finally(() => this.inFlight.delete(work));
  }

  private fail(cb: (err?: Error | null) => void, err: unknown, what: string): void {
    if ((err as Partial<SmtpReplyError>).responseCode) return cb(err as Error);
    const { reply, internal } = toSmtpError(err);
    if (internal) this.deps.logger.error({ err }, what);
    cb(internal ? internalReply() : reply);
  }
}
