/**
 * One delivery attempt over SMTP (RFC 5321) with nodemailer's SMTP connection: try the targets
 * (MX addresses, best first) until one gives us a session, then run one mail transaction for
 * all recipients of the job and return an outcome value. Nothing here touches the store.
 *
 * Session rules:
 *  - A target that cannot be connected to, greets with an error (RFC 5321 3.1, 4.2: 421/554),
 *    fails EHLO, or fails STARTTLS is skipped for the next one (5.1: "try the next MX");
 *    at most MAX_TARGETS per attempt (like Postfix's smtp_mx_address_limit).
 *  - Once MAIL FROM was sent, the replies of that server are the result.
 *  - Opportunistic TLS (RFC 7435, RFC 3207): STARTTLS whenever the server offers it, without
 *    verifying the certificate (no MTA-STS RFC 8461 or DANE RFC 7672 here: out of scope).
 *    Plain text only when STARTTLS is not offered; a failed STARTTLS or handshake is never
 *    followed by plain text on the same attempt — that target fails with phase "tls".
 *  - Timeouts per phase (RFC 5321 4.5.3.2): connect, greeting (also covers EHLO/STARTTLS),
 *    each command, and the final reply after the data ("." may take 10 minutes, 4.5.3.2.6).
 * Connections are not reused between attempts (a pool per MX is a possible later step).
 */
import net from 'node:net';
import { Readable } from 'node:stream';
import type { NodemailerError } from 'nodemailer/lib/errors.js';
import SMTPConnection from 'nodemailer/lib/smtp-connection/index.js';
import type { AttemptResult } from '../domain/delivery-result.js';
import { failureResult, sendErrorResult, sentResult, sessionFailure, type SessionFailure, type Target } from './smtp-results.js';

export type { Target } from './smtp-results.js';

export interface SmtpTimeouts {
  connectMs: number;
  /** Greeting, EHLO and the STARTTLS handshake (RFC 5321 4.5.3.2.1: 5 minutes). */
  greetingMs: number;
  /** Each command: MAIL, RCPT, DATA (RFC 5321 4.5.3.2.2-4: 5 minutes, 2 for DATA). */
  commandMs: number;
  /** Sending the message and waiting for the final reply (RFC 5321 4.5.3.2.5-6: 3 + 10 minutes). */
  dataMs: number;
}

export const DEFAULT_SMTP_TIMEOUTS: SmtpTimeouts = { connectMs: 30_000, greetingMs: 300_000, commandMs: 300_000, dataMs: 600_000 };

/** Addresses tried per attempt before giving up for now. */
export const MAX_TARGETS = 5;
/** How long to wait for the reply to QUIT before closing the socket ourselves. */
const QUIT_WAIT_MS = 5000;

export interface SmtpAttemptInput {
  targets: readonly Target[];
  port: number;
  /** Our EHLO name (config.hostname), RFC 5321 4.1.1.1. */
  heloName: string;
  /** Envelope sender, RFC 5321 4.1.1.2 (the return path). */
  sender: string;
  recipients: readonly string[];
  body: Buffer;
  timeouts: SmtpTimeouts;
  /** Aborting closes the connection; unfinished recipients are deferred. */
  signal?: AbortSignal;
}

export async function deliverOverSmtp(input: SmtpAttemptInput): Promise<AttemptResult> {
  let failure: SessionFailure | undefined;
  for (const target of input.targets.slice(0, MAX_TARGETS)) {
    if (input.signal?.aborted) break;
    const opened = await openSession(target, input);
    if (!opened.ok) {
      // Keep the most telling failure: a server's reply beats "connection refused".
      if (!failure || opened.failure.raw || !failure.raw) failure = opened.failure;
      continue;
    }
    try {
      return await transact(opened.conn, target, input);
    } finally {
      closeQuietly(opened.conn);
    }
  }
  return failureResult(input.recipients, failure ?? abortedFailure(input.targets[0]));
}

type Opened = { ok: true; conn: SMTPConnection } | { ok: false; failure: SessionFailure };

/** TCP connect, greeting, EHLO and STARTTLS when offered. */
function openSession(target: Target, input: SmtpAttemptInput): Promise<Opened> {
  return new Promise((resolve) => {
    const t = input.timeouts;
    const conn = new SMTPConnection({
      host: target.address,
      port: input.port,
      name: input.heloName,
      // SNI with the MX name (RFC 6066 3); never an IP address.
      servername: net.isIP(target.host) ? undefined : target.host,
      connectionTimeout: t.connectMs,
      greetingTimeout: t.greetingMs,
      socketTimeout: t.commandMs,
      // Opportunistic TLS (RFC 7435): encrypt, but accept any certificate.
      tls: { rejectUnauthorized: false },
      logger: false,
    });
    let settled = false;
    const finish = (value: Opened) => {
      if (settled) return;
      settled = true;
      input.signal?.removeEventListener('abort', onAbort);
      resolve(value);
    };
    const onAbort = () => {
      conn.close();
      finish({ ok: false, failure: abortedFailure(target) });
    };
    // The listener stays for the connection's life: an 'error' without a listener would throw.
    conn.on('error', (err: NodemailerError) => finish({ ok: false, failure: sessionFailure(err, target) }));
    input.signal?.addEventListener('abort', onAbort, { once: true });
    conn.connect((err) => (err ? finish({ ok: false, failure: sessionFailure(err, target) }) : finish({ ok: true, conn })));
  });
}

/** MAIL FROM, RCPT TO for each recipient, DATA (RFC 5321 3.3). */
function transact(conn: SMTPConnection, target: Target, input: SmtpAttemptInput): Promise<AttemptResult> {
  const session = { mx: target.host, address: target.address, tls: conn.secure };
  return new Promise((resolve) => {
    let settled = false;
    const finish = (result: AttemptResult) => {
      if (settled) return;
      settled = true;
      input.signal?.removeEventListener('abort', onAbort);
      resolve(result);
    };
    const broken = (text: string): AttemptResult =>
      sendErrorResult(input.recipients, Object.assign(new Error(text), { code: 'ECONNECTION' }), session, rcptRejections(conn));
    // close() drops nodemailer's pending send without calling back, so we answer ourselves.
    const onAbort = () => {
      conn.close();
      finish(broken('delivery attempt aborted (shutdown or attempt deadline)'));
    };
    input.signal?.addEventListener('abort', onAbort, { once: true });
    conn.once('end', () => setImmediate(() => finish(broken('connection closed before the transaction ended'))));
    const envelope = { from: input.sender, to: [...input.recipients], size: input.body.length, use8BitMime: has8bit(input.body) };
    conn.send(envelope, bodyStream(input.body, () => dataPhase(conn, input.timeouts.dataMs)), (err, info) => {
      finish(err ? sendErrorResult(input.recipients, err, session, rcptRejections(conn)) : sentResult(input.recipients, info, session));
    });
  });
}

/** The message as a stream that tells us when it starts being read: after the 354 reply. */
function bodyStream(body: Buffer, onStart: () => void): Readable {
  let started = false;
  return new Readable({
    read() {
      if (started) return;
      started = true;
      onStart();
      this.push(body);
      this.push(null);
    },
  });
}

/** From now on the socket may be silent for the data timeout (RFC 5321 4.5.3.2.6). */
function dataPhase(conn: SMTPConnection, dataMs: number): void {
  if (conn._socket) conn._socket.setTimeout(dataMs);
}

/**
 * RCPT rejections nodemailer collected before a DATA or connection failure. It keeps them on
 * its internal envelope only, so we read that defensively; without it those recipients get
 * the failure's reply instead of their own.
 */
function rcptRejections(conn: SMTPConnection): NodemailerError[] {
  const envelope = (conn as unknown as { _envelope?: { rejectedErrors?: unknown } })._envelope;
  return Array.isArray(envelope?.rejectedErrors) ? (envelope.rejectedErrors as NodemailerError[]) : [];
}

/** RFC 6152: BODY=8BITMIME only when the message needs it. */
function has8bit(body: Buffer): boolean {
  for (let i = 0; i < body.length; i++) if (body[i] > 0x7f) return true;
  return false;
}

/** QUIT (RFC 5321 4.1.1.10), and close anyway if the server does not answer it. */
function closeQuietly(conn: SMTPConnection): void {
  if (conn.destroyed) return;
  try {
    conn.quit();
  } catch {
    conn.close();
    return;
  }
  const timer = setTimeout(() => conn.close(), QUIT_WAIT_MS);
  timer.unref();
  conn.once('end', () => clearTimeout(timer));
}

function abortedFailure(target: Target | undefined): SessionFailure {
  return {
    target: target ?? { host: '', address: '' },
    phase: 'connect',
    reply: { text: target ? 'delivery attempt aborted (shutdown or attempt deadline)' : 'no MX address to connect to' },
  };
}
