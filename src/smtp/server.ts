/**
 * The SMTP submission listener (RFC 6409): STARTTLS on smtp.port and, optionally, implicit TLS
 * (RFC 8314) on smtp.implicitTlsPort. AUTH PLAIN/LOGIN is required before MAIL FROM; the
 * username names the channel (or "api" with a channel key), the password is an API key.
 * This adapter only speaks SMTP: connection limits, timeouts and the shutdown drain are in
 * sessions.ts, AUTH throttling in throttle.ts, submission policy behind one Submission verb per
 * command (authenticate, checkSender, checkRecipient, submitRaw), and every error becomes a
 * reply in replies.ts.
 */
import { listenFailure } from '../domain/listen-problem.js';
import type { Readable } from 'node:stream';
import type { Logger } from 'pino';
import type { SMTPServerAddress, SMTPServerAuthentication, SMTPServerSession } from 'smtp-server';
import type { Config } from '../config/schema.js';
import type { Coordination } from '../coordination/port.js';
import { normalizeEmail } from '../domain/address.js';
import { closeScope, inScope, openScope, underDeadline } from '../domain/request-deadline.js';
import { isUuid } from '../domain/uuid.js';
import type { Submission } from '../submission/submission.js';
import type { Submitter, UserNameMismatch } from '../submission/submitter.js';
import { readMessage } from './message-reader.js';
import type { ReceivedTrace } from '../submission/received.js';
import { smtpOk, smtpReply, toSmtpError, type SmtpReplyError, type SmtpReplyName } from './replies.js';
import { Sessions } from './sessions.js';
import { AuthThrottle } from './throttle.js';
import { loadTls, type TlsMaterial } from './tls.js';
import { clientAddress, WireServer } from './wire-server.js';
import type { GateTicket } from './connection-gate.js';

/** The settings the submission listener reads. */
export type SmtpSettings = Pick<Config, 'smtp' | 'hostname' | 'dataDir' | 'shutdown'>;

/** The submission verbs the listener calls, one per SMTP command that carries policy. */
export type SmtpSubmission = Pick<Submission, 'authenticate' | 'checkSender' | 'checkRecipient' | 'submitRaw'>;

const MAX_RECIPIENTS = 50;

/** The 535 that says which user name fits a valid key (submitter.ts UserNameMismatch). */
const MISMATCH_REPLIES: Record<UserNameMismatch, SmtpReplyName> = {
  'account-key-needs-channel-id': 'authAccountKeyUser',
  'channel-key-other-channel': 'authChannelKeyUser',
  'no-such-channel': 'authNoSuchChannel',
};

type Reply = (err?: Error | null, message?: string) => void;

export class SmtpListener {
  private servers: WireServer<GateTicket>[] = [];
  private tls: TlsMaterial | null = null;
  private readonly throttle: AuthThrottle;
  private readonly sessions: Sessions;
  private readonly inFlight = new Set<Promise<unknown>>();
  private ports: number[] = [];

  /**
   * requestDeadlineMs: how long a command waits for any one store or coordination call
   * (domain/request-deadline.ts; compose/store-engine.ts requestDeadlineMs): 451 4.3.0 after it.
   */
  constructor(
    private readonly deps: { config: SmtpSettings; submission: SmtpSubmission; logger: Logger; coordination: Pick<Coordination, 'failures'>; requestDeadlineMs?: number },
  ) {
    const smtp = deps.config.smtp;
    this.throttle = new AuthThrottle({ userLimit: smtp.authFailureLimit, addressLimit: smtp.authFailuresPerAddress, coordination: deps.coordination });
    this.sessions = new Sessions({
      maxConnections: smtp.maxConnections,
      maxConnectionsPerAddress: smtp.maxConnectionsPerAddress,
      authenticatedReserve: smtp.authenticatedReserve,
      authTimeoutMs: smtp.authTimeoutMs,
      idleTimeoutMs: smtp.idleTimeoutMs,
    });
  }

  async start(): Promise<void> {
    const { config } = this.deps;
    this.tls = await loadTls({ dataDir: config.dataDir, certFile: config.smtp.tlsCert, keyFile: config.smtp.tlsKey, hostname: config.hostname });
    this.servers = [this.create(false)];
    this.ports = [await listen(this.servers[0], config.smtp.port, config.smtp.host, 'smtp.port (POSTRIDER_SMTP_PORT)')];
    if (config.smtp.implicitTlsPort) {
      this.servers.push(this.create(true));
      this.ports.push(await listen(this.servers[1], config.smtp.implicitTlsPort, config.smtp.host, 'smtp.implicitTlsPort'));
    }
    this.deps.logger.info({ ports: this.ports, tls: this.tls.source }, 'smtp submission listening');
  }

  /** SIGHUP: re-reads the certificate files so a renewed certificate is used by new connections. */
  async reloadTls(): Promise<void> {
    const { config } = this.deps;
    const tls = await loadTls({ dataDir: config.dataDir, certFile: config.smtp.tlsCert, keyFile: config.smtp.tlsKey, hostname: config.hostname });
    for (const s of this.servers) s.updateSecureContext({ key: tls.key, cert: tls.cert });
    this.tls = tls;
    this.deps.logger.info({ tls: tls.source }, 'smtp certificate reloaded');
  }

  /**
   * Shutdown within shutdown.graceMs: stops accepting at once, answers new commands with
   * 421 4.3.2, closes idle sessions, lets messages being received or committed get their reply,
   * then ends every connection (sessions.ts). Safe to call twice.
   */
  async stop(): Promise<void> {
    const servers = this.servers;
    this.servers = [];
    const closed = servers.map((s) => new Promise<void>((resolve) => s.close(() => resolve())));
    await this.sessions.drain(this.deps.config.shutdown.graceMs);
    await Promise.allSettled([...this.inFlight]);
    for (const s of servers) s.destroyRefused();
    await Promise.all(closed);
    if (servers.length > 0) this.deps.logger.info({ connections: this.sessions.counts.total }, 'smtp submission stopped');
  }

  get port(): number {
    return this.ports[0] ?? 0;
  }

  get implicitTlsPort(): number {
    return this.ports[1] ?? 0;
  }

  get listening(): boolean {
    return this.servers.length > 0 && this.servers.every((s) => s.server.listening);
  }

  private create(secure: boolean): WireServer<GateTicket> {
    const { config } = this.deps;
    const server = new WireServer<GateTicket>(
      {
        secure,
        key: this.tls!.key,
        cert: this.tls!.cert,
        name: config.hostname,
        // smtp-server writes "220 <name> ESMTP " before the banner (RFC 5321 4.3.1 greeting).
        banner: 'postrider submission',
        // The library hides the RFC 2034 extension by default; our replies carry RFC 3463 codes,
        // so it is announced in EHLO, and the library's own replies (503, 530, ...) get codes too.
        hideENHANCEDSTATUSCODES: false,
        authRequiredMessage: smtpReply('authRequired').message,
        authMethods: ['PLAIN', 'LOGIN'],
        // Checked per connection in onAuth: plain-text AUTH is only allowed from loopback.
        allowInsecureAuth: true,
        size: config.smtp.maxMessageSize,
        // We answer oversized messages ourselves (onData), with our enhanced code.
        rejectOversized: false,
        disableReverseLookup: true,
        // Admission is ours (sessions.ts); this only bounds TLS handshakes before a session exists.
        maxClients: config.smtp.maxConnections,
        // The idle timeout before AUTH (and of a TLS handshake); sessions.ts lengthens it after AUTH.
        socketTimeout: config.smtp.authTimeoutMs,
        // Backstop only: stop() ends every connection itself within shutdown.graceMs.
        closeTimeout: config.shutdown.graceMs + 5000,
        logger: false,
        onAuth: (auth, session, cb) => this.onAuth(auth, session, cb),
        onSecure: (_socket, session, cb) => {
          this.sessions.secured(session.id);
          cb();
        },
        onMailFrom: (address, session, cb) => this.guard(cb, () => this.onMailFrom(address, session)),
        onRcptTo: (address, session, cb) => this.guard(cb, () => this.onRcptTo(address, session)),
        onData: (stream, session, cb) => this.onData(stream, session, cb),
        onClose: (session) => this.sessions.closed(session.id),
      },
      this.sessions,
      // Greeted at once: clients here authenticate, so a pause to catch early talkers only slows them.
      0,
    );
    server.on('error', (err) => this.deps.logger.warn({ err }, 'smtp connection error'));
    return server;
  }

  private onAuth(auth: SMTPServerAuthentication, session: SMTPServerSession, cb: (err: Error | null | undefined, res?: { user: unknown }) => void): void {
    if (!authAllowed(session.remoteAddress, session.secure)) return cb(smtpReply('encryptionRequired'));
    underDeadline(this.deps.requestDeadlineMs ?? 0, () => this.authenticate(auth, session)).then(
      (user) => cb(null, { user }),
      (err: unknown) => this.fail(cb, err),
    );
  }

  /** The throttle's verdict, then the key lookup; a refusal throws its reply. */
  private async authenticate(auth: SMTPServerAuthentication, session: SMTPServerSession): Promise<unknown> {
    const ip = clientAddress(session.remoteAddress);
    const username = auth.username ?? '';
    // AUTH PLAIN's authzid (RFC 4616 2): empty, or the user name itself (the library takes it as
    // the user name when the authcid is empty); anything else was accepted as that user name alone.
    if (auth.authzid && auth.authzid !== username) throw smtpReply('authzidRefused');
    // The failure counts are the coordination's (shared by a cluster's nodes): asked, not read.
    const verdict = await this.throttle.check(ip, username);
    if (verdict === 'address-throttled') throw smtpReply('authThrottled');
    if (verdict === 'user-locked') throw smtpReply('authUserLocked');
    // The key lookup is a store read (asynchronous through the store port): the reply waits for it.
    const user = await this.deps.submission.authenticate(username, auth.password ?? '');
    if (!user || 'mismatch' in user) {
      // A mismatch still counts as a failure: the throttle must not learn which keys are valid.
      await this.throttle.fail(ip, username);
      this.deps.logger.warn({ ip, username: loggableUsername(username), mismatch: user?.mismatch }, 'smtp auth failed');
      throw smtpReply(user ? MISMATCH_REPLIES[user.mismatch] : 'authInvalid');
    }
    await this.throttle.succeed(ip, username);
    this.sessions.authenticated(session.id);
    return user;
  }

  private onMailFrom(address: SMTPServerAddress, session: SMTPServerSession): void | Promise<void> {
    const n = normalizeEmail(address.address);
    if ('problem' in n) throw smtpReply('badSender', n.problem.message);
    return this.deps.submission.checkSender(submitterOf(session), n.email);
  }

  private onRcptTo(address: SMTPServerAddress, session: SMTPServerSession): void | Promise<void> {
    if (session.envelope.rcptTo.length >= MAX_RECIPIENTS) throw smtpReply('tooManyRecipients', `at most ${MAX_RECIPIENTS} per message`);
    const n = normalizeEmail(address.address);
    if ('problem' in n) throw smtpReply('badRecipient', n.problem.message);
    return this.deps.submission.checkRecipient(submitterOf(session), n.email);
  }

  private onData(stream: Readable, session: SMTPServerSession, cb: Reply): void {
    const limit = this.deps.config.smtp.maxMessageSize;
    const reply: Reply = (err, message) => {
      cb(err, message);
      this.sessions.afterTransaction(session.id);
    };
    const work = readMessage(stream, limit)
      .then(async (m) => {
        if ('oversized' in m) return reply(smtpReply('messageTooLarge', `the limit is ${limit} bytes`));
        if ('disconnected' in m) return this.deps.logger.info({ ip: session.remoteAddress }, 'smtp client closed the connection during DATA; nothing kept');
        // One native scan of the message (RFC 5322 2.3: no NUL in a message).
        if (m.raw.indexOf(0) !== -1) return reply(smtpReply('messageHasNul'));
        const user = submitterOf(session);
        const res = await underDeadline(this.deps.requestDeadlineMs ?? 0, () =>
          this.deps.submission.submitRaw({
            principal: user.principal,
            channel: user.channel,
            recipients: session.envelope.rcptTo.map((r) => (normalizeEmail(r.address) as { email: string }).email),
            raw: m.raw,
            trace: this.trace(session),
          }),
        );
        reply(null, smtpOk('queued', res.messageId));
      })
      .catch((err: unknown) => this.fail(reply, err));
    this.inFlight.add(work);
    void work.finally(() => this.inFlight.delete(work));
  }

  /** What the Received field records of the session (RFC 5321 4.4); smtp.receivedClientInfo false hides the client. */
  private trace(session: SMTPServerSession): ReceivedTrace {
    const { config } = this.deps;
    const show = config.smtp.receivedClientInfo;
    return { by: config.hostname, helo: show ? session.hostNameAppearsAs : null, address: show ? session.remoteAddress : null, secure: session.secure };
  }

  /** Runs a command's check (synchronous, or asynchronous when it reads the store: under the request deadline) and answers with its outcome. */
  private guard(cb: (err?: Error | null) => void, check: () => void | Promise<void>): void {
    const scope = openScope(this.deps.requestDeadlineMs ?? 0);
    let pending: void | Promise<void> = undefined;
    try {
      pending = inScope(scope, check);
    } catch (err) {
      return this.fail(cb, err);
    } finally {
      if (!pending) closeScope(scope);
    }
    if (pending) pending.finally(() => closeScope(scope)).then(() => cb(), (err: unknown) => this.fail(cb, err));
    else cb();
  }

  private fail(cb: (err?: Error | null) => void, err: unknown): void {
    if ((err as Partial<SmtpReplyError>).responseCode) return cb(err as Error);
    const { reply, internal } = toSmtpError(err);
    if (internal) this.deps.logger.error({ err }, 'smtp submission failed');
    cb(reply);
  }
}

/** The Submitter onAuth stored with the session; MAIL FROM, RCPT TO and DATA come after AUTH. */
function submitterOf(session: SMTPServerSession): Submitter {
  return session.user as unknown as Submitter;
}

/**
 * The AUTH user name as it may be logged. A valid one is a channel id or "api"; anything else
 * could be a secret (a client that swapped user name and password sends its API key here), so
 * only its length is logged.
 */
function loggableUsername(username: string | undefined): string {
  const name = (username ?? '').trim();
  if (name.toLowerCase() === 'api' || isUuid(name)) return name;
  return `(not a channel id; ${name.length} characters, not logged)`;
}

/** RFC 8314 / RFC 4954 4: credentials only over TLS, except from this machine itself. */
export function authAllowed(ip: string, secure: boolean): boolean {
  return secure || ip === '::1' || ip.startsWith('127.') || ip.startsWith('::ffff:127.');
}

function listen(server: WireServer<GateTicket>, port: number, host: string, setting: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const fail = (err: unknown) => reject(listenFailure(err, { what: 'SMTP submission', host, port, setting: `smtp.host / ${setting}` }));
    server.server.once('error', fail);
    server.listen(port, host, () => {
      server.server.off('error', fail);
      resolve((server.server.address() as { port: number }).port);
    });
  });
}
