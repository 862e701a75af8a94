/**
 * The SMTP submission listener (RFC 6409): STARTTLS on smtp.port and, optionally, implicit TLS
 * (RFC 8314) on smtp.implicitTlsPort. AUTH PLAIN/LOGIN is required before MAIL FROM; the
 * username names the channel (or "api" with a channel key), the password is an API key.
 * Policy (sender domain, recipients, suppressions) is the submission path's; this adapter only
 * speaks SMTP and maps errors to replies in replies.ts.
 */
import net from 'node:net';
import type { Readable } from 'node:stream';
import type { Logger } from 'pino';
import { SMTPServer, type SMTPServerAddress, type SMTPServerAuthentication, type SMTPServerSession } from 'smtp-server';
import type { Config } from '../config/schema.js';
import { normalizeEmail, recipientKey } from '../domain/address.js';
import { AppError } from '../domain/errors.js';
import type { Channel, Principal } from '../domain/types.js';
import { findApiKeyByToken } from '../store/api-keys.js';
import { getChannel } from '../store/channels.js';
import type { Store } from '../store/env.js';
import { isSuppressed } from '../store/suppressions.js';
import { isDenied, sendingAccount } from '../submission/policy.js';
import { senderKey } from '../submission/sender.js';
import type { Submission } from '../submission/submission.js';
import { ENHANCED_PREFIX, smtpError, toSmtpError } from './replies.js';
import { AuthThrottle } from './throttle.js';
import { loadTls, type TlsMaterial } from './tls.js';

interface SessionUser {
  principal: Principal;
  channel: Channel;
}

const MAX_RECIPIENTS = 50;

/**
 * smtp-server derives the enhanced status code of an error reply from the basic code alone
 * (550 → 5.1.1), which would tell a client "no such mailbox" for a policy refusal. Our errors
 * carry their own RFC 3463 code in front of the text; this subclass sends those verbatim.
 */
class PostriderSmtpServer extends SMTPServer {
  override connect(socket: net.Socket, socketOptions: unknown): void {
    const before = new Set((this as unknown as { connections: Set<unknown> }).connections);
    (SMTPServer.prototype as unknown as { connect: (s: unknown, o: unknown) => void }).connect.call(this, socket, socketOptions);
    for (const conn of (this as unknown as { connections: Set<{ send: (c: number, d: unknown, ctx?: unknown) => void }> }).connections) {
      if (before.has(conn)) continue;
      const send = conn.send.bind(conn);
      conn.send = (code, data, ctx) => (typeof data === 'string' && ENHANCED_PREFIX.test(data) ? send(code, data, false) : send(code, data, ctx));
    }
  }
}

export class SmtpListener {
  private servers: SMTPServer[] = [];
  private tls: TlsMaterial | null = null;
  private readonly throttle: AuthThrottle;
  private readonly inFlight = new Set<Promise<unknown>>();
  private ports: number[] = [];

  constructor(
    private readonly deps: { config: Config; store: Store; submission: Submission; logger: Logger },
  ) {
    this.throttle = new AuthThrottle({ limit: deps.config.smtp.authFailureLimit });
  }

  async start(): Promise<void> {
    const { config } = this.deps;
    this.tls = await loadTls({ dataDir: config.dataDir, certFile: config.smtp.tlsCert, keyFile: config.smtp.tlsKey, hostname: config.hostname });
    this.servers = [this.create(false)];
    this.ports = [await listen(this.servers[0], config.smtp.port, config.smtp.host)];
    if (config.smtp.implicitTlsPort) {
      this.servers.push(this.create(true));
      this.ports.push(await listen(this.servers[1], config.smtp.implicitTlsPort, config.smtp.host));
    }
    this.deps.logger.info({ ports: this.ports, tls: this.tls.source }, 'smtp submission listening');
  }

  /** SIGHUP: re-reads the certificate files so a renewed certificate is used by new connections. */
  async reloadTls(): Promise<void> {
    const { config } = this.deps;
    const tls = await loadTls({ dataDir: config.dataDir, certFile: config.smtp.tlsCert, keyFile: config.smtp.tlsKey, hostname: config.hostname });
    for (const s of this.servers) (s as unknown as { updateSecureContext(o: { key: string; cert: string }): void }).updateSecureContext({ key: tls.key, cert: tls.cert });
    this.tls = tls;
    this.deps.logger.info({ tls: tls.source }, 'smtp certificate reloaded');
  }

  /** Stops accepting, lets running DATA commits finish, then closes connections. */
  async stop(): Promise<void> {
    const servers = this.servers;
    this.servers = [];
    await Promise.all(servers.map((s) => new Promise<void>((resolve) => s.server.close(() => resolve()))));
    await Promise.allSettled([...this.inFlight]);
    await Promise.all(servers.map((s) => new Promise<void>((resolve) => s.close(() => resolve()))));
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

  private create(secure: boolean): SMTPServer {
    const { config } = this.deps;
    const server = new PostriderSmtpServer({
      secure,
      key: this.tls!.key,
      cert: this.tls!.cert,
      name: config.hostname,
      banner: 'postrider ESMTP submission',
      authMethods: ['PLAIN', 'LOGIN'],
      // Checked per connection in onAuth: plain-text AUTH is only allowed from loopback.
      allowInsecureAuth: true,
      size: config.smtp.maxMessageSize,
      rejectOversized: true,
      disableReverseLookup: true,
      maxClients: 500,
      socketTimeout: 120_000,
      closeTimeout: 10_000,
      logger: false,
      onAuth: (auth, session, cb) => this.onAuth(auth, session, cb),
      onMailFrom: (address, session, cb) => this.guard(cb, () => this.onMailFrom(address, session)),
      onRcptTo: (address, session, cb) => this.guard(cb, () => this.onRcptTo(address, session)),
      onData: (stream, session, cb) => this.onData(stream, session, cb),
    });
    server.on('error', (err) => this.deps.logger.warn({ err }, 'smtp connection error'));
    return server;
  }

  private onAuth(auth: SMTPServerAuthentication, session: SMTPServerSession, cb: (err: Error | null | undefined, res?: { user: unknown }) => void): void {
    const ip = session.remoteAddress;
    if (!authAllowed(ip, session.secure)) return cb(smtpError(538, '5.7.11', 'Encryption required: issue STARTTLS first'));
    if (this.throttle.blocked(ip)) return cb(smtpError(421, '4.7.0', 'Too many failed authentication attempts; try again later'));
    const user = this.authenticate(auth.username ?? '', auth.password ?? '');
    if (!user) {
      this.throttle.fail(ip);
      this.deps.logger.warn({ ip, username: loggableUsername(auth.username) }, 'smtp auth failed');
      return cb(smtpError(535, '5.7.8', 'Authentication credentials invalid'));
    }
    this.throttle.succeed(ip);
    cb(null, { user });
  }

  /** Username: the channel id, or "api" with a channel-level key. Password: the API key. */
  private authenticate(username: string, password: string): SessionUser | null {
    const key = findApiKeyByToken(this.deps.store, password);
    if (!key) return null;
    const name = username.trim().toLowerCase();
    const channelId = key.channelId ?? (name === 'api' ? null : name);
    if (!channelId || (key.channelId && name !== 'api' && name !== key.channelId)) return null;
    const channel = getChannel(this.deps.store, channelId);
    if (!channel || channel.accountId !== key.accountId) return null;
    return { principal: { keyId: key.id, accountId: key.accountId, channelId: key.channelId }, channel };
  }

  private onMailFrom(address: SMTPServerAddress, session: SMTPServerSession): void {
    const user = session.user as unknown as SessionUser;
    const n = normalizeEmail(address.address);
    if ('problem' in n) throw smtpError(553, '5.1.7', `Bad sender address: ${n.problem.message}`);
    sendingAccount(this.deps.store, user.principal.accountId);
    try {
      senderKey(this.deps.submission.deps, { accountId: user.principal.accountId, channel: user.channel, from: n.email });
    } catch (err) {
      if (err instanceof AppError) throw smtpError(550, '5.7.1', `Sender not allowed: ${err.message}`);
      throw err;
    }
  }

  private onRcptTo(address: SMTPServerAddress, session: SMTPServerSession): void {
    const user = session.user as unknown as SessionUser;
    // RFC 5321 4.5.3.1.8: a server may limit recipients per transaction; 452 asks for the rest later.
    if (session.envelope.rcptTo.length >= MAX_RECIPIENTS) throw smtpError(452, '4.5.3', `Too many recipients (at most ${MAX_RECIPIENTS} per message)`);
    const n = normalizeEmail(address.address);
    if ('problem' in n) throw smtpError(553, '5.1.3', `Bad recipient address: ${n.problem.message}`);
    if (isDenied(this.deps.config.policy.denyRecipients, n.email)) throw smtpError(550, '5.7.1', 'Recipient not allowed by policy');
    if (isSuppressed(this.deps.store, user.channel.id, 'transactional', recipientKey(n.email))) {
      throw smtpError(550, '5.7.1', 'Recipient is on the suppression list of this channel');
    }
  }

  private onData(stream: Readable, session: SMTPServerSession, cb: (err?: Error | null, message?: string) => void): void {
    const chunks: Buffer[] = [];
    stream.on('data', (c: Buffer) => chunks.push(c));
    stream.on('error', (err) => cb(toSmtpError(err).reply));
    stream.on('end', () => {
      if ((stream as Readable & { sizeExceeded?: boolean }).sizeExceeded) {
        return cb(smtpError(552, '5.3.4', `Message exceeds the maximum size of ${this.deps.config.smtp.maxMessageSize} bytes`));
      }
      const user = session.user as unknown as SessionUser;
      const work = this.deps.submission
        .raw({
          principal: user.principal,
          channel: user.channel,
          recipients: session.envelope.rcptTo.map((r) => (normalizeEmail(r.address) as { email: string }).email),
          raw: Buffer.concat(chunks),
        })
        .then(
          (res) => cb(null, `2.0.0 Ok: queued as ${res.messageId}`),
          (err) => this.fail(cb, err),
        );
      this.inFlight.add(work);
      void work.finally(() => this.inFlight.delete(work));
    });
  }

  /** Runs a synchronous policy check and turns any error into a reply. */
  private guard(cb: (err?: Error | null) => void, check: () => void): void {
    try {
      check();
      cb();
    } catch (err) {
      this.fail(cb, err);
    }
  }

  private fail(cb: (err?: Error | null) => void, err: unknown): void {
    if ((err as { responseCode?: number }).responseCode) return cb(err as Error);
    const { reply, internal } = toSmtpError(err);
    if (internal) this.deps.logger.error({ err }, 'smtp submission failed');
    cb(reply);
  }
}

/**
 * The AUTH user name as it may be logged. A valid one is a channel id or "api"; anything else
 * could be a secret (a client that swapped user name and password sends its API key here), so
 * only its length is logged.
 */
function loggableUsername(username: string | undefined): string {
  const name = (username ?? '').trim();
  if (name.toLowerCase() === 'api' || /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(name)) return name;
  return `(not a channel id; ${name.length} characters, not logged)`;
}

/** RFC 8314 / RFC 4954 4: credentials only over TLS, except from this machine itself. */
export function authAllowed(ip: string, secure: boolean): boolean {
  return secure || ip === '::1' || ip.startsWith('127.') || ip.startsWith('::ffff:127.');
}

function listen(server: SMTPServer, port: number, host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    server.server.once('error', reject);
    server.listen(port, host, () => {
      server.server.off('error', reject);
      resolve((server.server.address() as net.AddressInfo).port);
    });
  });
}
