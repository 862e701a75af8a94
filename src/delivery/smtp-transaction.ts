/**
 * One mail transaction over an open session (RFC 5321 3.3): MAIL FROM, RCPT TO for every
 * recipient of the job, DATA, the message, the final reply; then whether the session may carry
 * another one.
 *
 * PIPELINING (RFC 2920): nodemailer's SMTPConnection (10.x, _setEnvelope) sends MAIL FROM, every
 * RCPT TO and DATA in one corked write when the server's EHLO offered PIPELINING, and matches
 * the replies in order; without it, one command per round trip. On a kept connection the RSET
 * goes in front of them in the same write (smtp-session.ts writeReset).
 */
import { Readable } from 'node:stream';
import type { NodemailerError } from 'nodemailer/lib/errors.js';
import type SMTPConnection from 'nodemailer/lib/smtp-connection/index.js';
import type { AttemptResult } from '../domain/delivery-result.js';
import type { AbortLike } from './attempt-abort.js';
import { mailNeeds, missingExtension } from './mail-extensions.js';
import { messageSource } from './smtp-data.js';
import { notSentResult, sendErrorResult, sentResult, slowsDown } from './smtp-results.js';
import type { SmtpSession, SmtpTimeouts } from './smtp-session.js';

export interface TransactionInput {
  /** Envelope sender, RFC 5321 4.1.1.2 (the return path). */
  sender: string;
  recipients: readonly string[];
  body: Buffer;
  timeouts: SmtpTimeouts;
  signal?: AbortLike;
  /**
   * Called after the 354 reply, right before the message is sent; the message waits for the
   * promise it returns (the dispatcher's pacer: delivery.rate holds at the receiver).
   */
  beforeBody?: () => Promise<void> | undefined;
  /**
   * Asked right before MAIL FROM is written, in the same turn: false calls the transaction off
   * before it begins (RFC 5321 3.3: MAIL starts it), nothing written, every recipient deferred.
   */
  stillWanted?: () => boolean;
}

export interface Transacted {
  result: AttemptResult;
  /**
   * True when the session ended the transaction in a known state and may carry the next one:
   * the server accepted the message, nothing failed, nothing asked us to slow down.
   */
  clean: boolean;
}

/**
 * transact() with `reset` whose RSET was not answered 2xx (refused, the connection closed or
 * timed out before its reply): nothing of this transaction counts, the session is closed, and
 * the caller tries another connection as after a failed awaited RSET.
 */
export const RESET_FAILED = { resetFailed: true } as const;

/**
 * One transaction. `reset`: a kept session's RSET goes first, in the same write as MAIL FROM,
 * RCPT TO and DATA (RFC 2920: one write instead of a round trip and a write of its own).
 */
export function transact(session: SmtpSession, input: TransactionInput, o: { reset?: boolean } = {}): Promise<Transacted | typeof RESET_FAILED> {
  const conn = session.conn;
  const s = { mx: session.target.host, address: session.target.address, tls: session.tls, tlsDetail: session.tlsDetail };
  // Untouched (a kept one still gets its RSET at its next use), so it may carry the next one.
  if (input.stillWanted?.() === false) return Promise.resolve({ result: calledOff(input.recipients, s), clean: session.usable });
  // SMTPUTF8 and 8BITMIME: what the message needs, and a permanent failure when the receiver lacks it.
  const needs = mailNeeds(input.sender, input.recipients, input.body);
  const missing = missingExtension(needs, session.extensions, session.target.host);
  if (missing) return Promise.resolve({ result: notSentResult(input.recipients, missing, s), clean: session.usable });
  session.smtpUtf8 = needs.smtpUtf8;
  session.messages++;
  return new Promise((resolve) => {
    let settled = false;
    let resetPending = o.reset === true;
    const finish = (result: AttemptResult, sent: boolean) => {
      if (settled) return;
      settled = true;
      input.signal?.removeEventListener('abort', onAbort);
      conn.off('end', onEnd);
      if (resetPending) {
        session.close();
        return resolve(RESET_FAILED);
      }
      // A send that failed (MAIL, every RCPT or DATA refused, a broken connection, a timeout)
      // spoils the session: a reused connection must start from a state we are sure of. Single
      // refused recipients of an accepted message do not.
      const clean = sent && session.usable && !slowsDown(result);
      if (clean) socketTimeout(conn, input.timeouts.commandMs);
      else session.spoil();
      resolve({ result, clean });
    };
    const broken = (text: string): AttemptResult =>
      sendErrorResult(input.recipients, Object.assign(new Error(text), { code: 'ECONNECTION' }), s, rcptRejections(conn));
    // close() drops nodemailer's pending send without calling back, so we answer ourselves.
    const onAbort = () => {
      session.close();
      finish(broken('delivery attempt aborted (shutdown or attempt deadline)'), false);
    };
    const onEnd = () => setImmediate(() => finish(broken('connection closed before the transaction ended'), false));
    input.signal?.addEventListener('abort', onAbort, { once: true });
    conn.once('end', onEnd);
    const envelope = { from: input.sender, to: [...input.recipients], size: input.body.length, use8BitMime: needs.eightBit };
    const onStart = () => socketTimeout(conn, input.timeouts.dataMs);
    const message = session.framedData ? messageSource(input.body, onStart, input.beforeBody) : bodyStream(input.body, onStart, input.beforeBody);
    if (o.reset) {
      session.cork();
      session.writeReset((ok) => {
        if (ok) resetPending = false;
        else finish(broken('RSET refused'), false);
      });
    }
    // nodemailer types the message as a string, Buffer or stream; it only calls pipe() on it.
    conn.send(envelope, message as Readable, (err, info) => {
      finish(err ? sendErrorResult(input.recipients, err, s, rcptRejections(conn)) : sentResult(input.recipients, info, s), !err);
    });
    if (o.reset) session.uncork();
  });
}

/** A transaction called off before MAIL FROM: nothing was sent, no reply to report. */
function calledOff(recipients: readonly string[], s: Pick<AttemptResult, 'mx' | 'address' | 'tls' | 'tlsDetail'>): AttemptResult {
  const response = 'not sent: the attempt was called off before MAIL FROM';
  return { ...s, recipients: recipients.map((recipient) => ({ recipient, outcome: 'deferred', category: 'other', phase: 'mail', response })), response };
}

/**
 * The message as a stream that tells us when it starts being read (after the 354 reply) and
 * holds it back until `before` (the pacer's slot) resolves.
 */
function bodyStream(body: Buffer, onStart: () => void, before?: () => Promise<void> | undefined): Readable {
  let started = false;
  const send = (stream: Readable) => {
    // An abort while waiting closed the session and its stream: nothing to send any more.
    if (stream.destroyed) return;
    onStart();
    stream.push(body);
    stream.push(null);
  };
  return new Readable({
    read() {
      if (started) return;
      started = true;
      const wait = before?.();
      if (wait) void wait.then(() => send(this));
      else send(this);
    },
  });
}

/**
 * How long the socket may be silent from now on: the data timeout once the body is read
 * (RFC 5321 4.5.3.2.6), the command timeout again for the next transaction on a kept connection.
 */
function socketTimeout(conn: SMTPConnection, ms: number): void {
  if (conn._socket) conn._socket.setTimeout(ms);
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
