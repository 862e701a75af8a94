/**
 * The inbound SMTP listener (RFC 5321 server, no AUTH): the MX of every return-path host
 * (`<returnPathLabel>.<domain>`, see domain/return-path.ts) points at this daemon's host name,
 * so asynchronous bounces, feedback reports and List-Unsubscribe mails arrive here. It accepts
 * mail only for those hosts and refuses every other recipient at RCPT with 550 5.7.1, so it is
 * never a relay. STARTTLS (RFC 3207) is offered with the submission listener's certificate.
 * What a message means is InboundProcessor's business; the daemon builds it and hands it over.
 */
import { listenFailure } from '../domain/listen-problem.js';
import type net from 'node:net';
import type { Readable } from 'node:stream';
import type { Logger } from 'pino';
import type { SMTPServer, SMTPServerAddress, SMTPServerSession } from 'smtp-server';
import type { Config } from '../config/schema.js';
import { internalReply, smtpOk, smtpReply } from '../smtp/replies.js';
import { loadTls } from '../smtp/tls.js';
import { EnhancedCodeServer } from '../smtp/wire-server.js';
import type { InboundProcessor } from './processor.js';

/** Reports are small; a DSN carrying a whole large original is cut by the sender or refused. */
const MAX_SIZE = 10 * 1024 * 1024;
const MAX_RECIPIENTS = 20;

/** The settings the inbound listener reads: its address and the certificate (smtp.tls*). */
export type InboundSettings = Pick<Config, 'inbound' | 'smtp' | 'hostname' | 'dataDir'>;

export class InboundListener {
  private server: SMTPServer | null = null;
  private boundPort = 0;
  private readonly inFlight = new Set<Promise<unknown>>();

  constructor(private readonly deps: { config: InboundSettings; processor: Pick<InboundProcessor, 'accepts' | 'process'>; logger: Logger }) {}

  async start(): Promise<void> {
    const { config } = this.deps;
    const tls = await loadTls({ dataDir: config.dataDir, certFile: config.smtp.tlsCert, keyFile: config.smtp.tlsKey, hostname: config.hostname });
    const server = new EnhancedCodeServer({
      key: tls.key,
      cert: tls.cert,
      name: config.hostname,
      // smtp-server writes "220 <name> ESMTP " before the banner.
      banner: 'postrider',
      // RFC 2034: our replies carry RFC 3463 codes, so the extension is announced (the library hides it by default).
      hideENHANCEDSTATUSCODES: false,
      disabledCommands: ['AUTH'],
      authOptional: true,
      size: MAX_SIZE,
      disableReverseLookup: true,
      maxClients: 200,
      socketTimeout: 60_000,
      closeTimeout: 10_000,
      logger: false,
      onRcptTo: (address, session, cb) => this.onRcptTo(address, session, cb),
      onData: (stream, session, cb) => this.onData(stream, session, cb),
    });
    server.on('error', (err) => this.deps.logger.warn({ err }, 'inbound connection error'));
    this.boundPort = await new Promise<number>((resolve, reject) => {
      const fail = (err: unknown) =>
        reject(listenFailure(err, { what: 'Inbound (bounces and reports)', host: config.inbound.host, port: config.inbound.port, setting: 'inbound.host / inbound.port' }));
      server.server.once('error', fail);
      server.listen(config.inbound.port, config.inbound.host, () => {
        server.server.off('error', fail);
        resolve((server.server.address() as net.AddressInfo).port);
      });
    });
    this.server = server;
    this.deps.logger.info({ port: this.boundPort }, 'inbound listening');
  }

  async stop(): Promise<void> {
    const server = this.server;
    this.server = null;
    if (!server) return;
    await new Promise<void>((resolve) => server.server.close(() => resolve()));
    await Promise.allSettled([...this.inFlight]);
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  get port(): number {
    return this.boundPort;
  }

  get listening(): boolean {
    return this.server?.server.listening ?? false;
  }

  private onRcptTo(address: SMTPServerAddress, session: SMTPServerSession, cb: (err?: Error | null) => void): void {
    if (session.envelope.rcptTo.length >= MAX_RECIPIENTS) return cb(smtpReply('tooManyRecipients', `at most ${MAX_RECIPIENTS} per message`));
    // The check reads the store (the message a bounce address names): the reply waits for it.
    this.deps.processor.accepts(address.address).then(
      // RFC 5321 3.6.2 / 7.1: a server that is not a relay refuses foreign recipients.
      (ok) => cb(ok ? null : smtpReply('relayDenied')),
      (err: unknown) => {
        this.deps.logger.error({ err }, 'inbound recipient check failed');
        cb(internalReply());
      },
    );
  }

  private onData(stream: Readable, session: SMTPServerSession, cb: (err?: Error | null, message?: string) => void): void {
    const chunks: Buffer[] = [];
    stream.on('data', (c: Buffer) => chunks.push(c));
    stream.on('error', (err) => cb(err));
    stream.on('end', () => {
      if ((stream as Readable & { sizeExceeded?: boolean }).sizeExceeded) return cb(smtpReply('messageTooLarge', `the limit is ${MAX_SIZE} bytes`));
      const env = {
        mailFrom: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
        rcptTo: session.envelope.rcptTo.map((r) => r.address),
      };
      const work = this.deps.processor.process(env, Buffer.concat(chunks)).then(
        (outcome) => {
          this.deps.logger.info({ event: 'inbound', ...outcome, ip: session.remoteAddress }, 'inbound message');
          cb(null, smtpOk('received'));
        },
        (err) => {
          // A store fault: 451 so the sender keeps the report and tries again.
          this.deps.logger.error({ err }, 'inbound processing failed');
          cb(internalReply());
        },
      );
      this.inFlight.add(work);
      void work.finally(() => this.inFlight.delete(work));
    });
  }
}
