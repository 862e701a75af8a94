/**
 * Turns what nodemailer's SMTP connection reports (a send result, a send error, a connection
 * error) into per-recipient outcome values, classified by the rules in domain/. The only
 * place that knows nodemailer's error shapes (its codes: ECONNECTION, ETIMEDOUT, ETLS,
 * EENVELOPE, EMESSAGE... and `command`, `response`, `rejectedErrors`).
 */
import type { NodemailerError } from 'nodemailer/lib/errors.js';
import type { SMTPConnectionSendInfo } from 'nodemailer/lib/smtp-connection/index.js';
import type { AttemptResult, RecipientResult, TlsDetail } from '../domain/delivery-result.js';
import type { DeliveryPhase } from '../domain/delivery-outcome.js';
import { classifyReply, MAX_REPLY_LENGTH, parseReply, type ParsedReply } from '../domain/smtp-reply.js';
import type { DaneResult } from '../dane/index.js';

export interface Target {
  /** MX host name (SNI, logs), or the domain itself for an implicit MX. */
  host: string;
  address: string;
  /** The host's TLSA lookup when it makes TLS mandatory (RFC 7672: kind dane or unusable). */
  dane?: DaneResult;
}

/** Why a session could not be opened with one target (the next one is tried). */
export interface SessionFailure {
  target: Target;
  phase: DeliveryPhase;
  reply: ParsedReply;
  /** The server's reply as received; absent for local failures (refused, timeout, TLS). */
  raw?: string;
  /** No TCP connection or no greeting (phase connect, no reply): the attempt's connectFailed. */
  noConnection?: true;
  /** The local address could not be bound (EADDRNOTAVAIL): the attempt's localError. */
  localError?: 'address_unavailable';
}

/** Applies the classification to one recipient. */
export function recipientResult(recipient: string, reply: ParsedReply, phase: DeliveryPhase, raw?: string): RecipientResult {
  // Not {...reply, phase}: V8 builds new hidden classes for it on every call (bench/RESULTS.md, issue 36).
  const c = classifyReply(Object.assign({}, reply, { phase }));
  return {
    recipient,
    outcome: c.outcome,
    bounceType: c.bounceType,
    category: c.category,
    phase,
    smtpCode: reply.code,
    enhancedCode: reply.enhancedCode,
    response: keptReply(raw?.trim() || reply.text),
  };
}

/**
 * What is kept of a reply (events, the job's history, webhooks): its first MAX_REPLY_LENGTH
 * characters, as much as is read of it. A server may send up to nodemailer's 1 MiB, for each
 * recipient and at every retry.
 */
function keptReply(text: string): string {
  return text.length > MAX_REPLY_LENGTH ? text.slice(0, MAX_REPLY_LENGTH) : text;
}

/**
 * A nodemailer error during connect/greeting/EHLO/STARTTLS, as a session failure. `upgrading`:
 * the STARTTLS handshake was under way (a handshake error reaches us as a socket error, ESOCKET).
 */
export function sessionFailure(err: NodemailerError, target: Target, upgrading = false): SessionFailure {
  const response = typeof err.response === 'string' ? err.response : '';
  let phase: DeliveryPhase = 'connect';
  if (err.code === 'ETLS' || err.command === 'STARTTLS' || upgrading) phase = 'tls';
  else if (err.command === 'EHLO' || err.command === 'HELO') phase = 'ehlo';
  else if (response && err.command === 'CONN') phase = 'greeting';
  const reply = response ? parseReply(response) : { text: localText(err) };
  const failure: SessionFailure = { target, phase, reply, raw: response || undefined };
  if (phase === 'connect' && !response) failure.noConnection = true;
  // bind(2) or connect(2) with a local address the machine does not have (node's syscall 'bind').
  if (err.originalCode === 'EADDRNOTAVAIL' || err.code === 'EADDRNOTAVAIL') failure.localError = 'address_unavailable';
  return failure;
}

/** Every recipient gets the session failure (no session could be opened with any target). */
export function failureResult(recipients: readonly string[], f: SessionFailure): AttemptResult {
  const results = recipients.map((r) => recipientResult(r, f.reply, f.phase, f.raw));
  const result = summarize(results, { mx: f.target.host, address: f.target.address, tls: false });
  if (f.noConnection || f.localError) result.connectFailed = true;
  if (f.localError) result.localError = f.localError;
  return result;
}

/** A completed transaction: accepted recipients are delivered with the final DATA reply. */
export function sentResult(recipients: readonly string[], info: SMTPConnectionSendInfo, session: Session): AttemptResult {
  const accepted = new Set(info.accepted);
  const rejected = byRecipient(info.rejectedErrors ?? []);
  const final = parseReply(info.response);
  const results = recipients.map((r) => {
    const err = rejected.get(r);
    if (err) return fromRcptError(r, err);
    if (accepted.has(r)) return recipientResult(r, final, 'message', info.response);
    return recipientResult(r, { text: 'no reply was received for this recipient' }, 'message');
  });
  return summarize(results, session);
}

/**
 * A transaction not begun because the receiver lacks an extension the message needs
 * (mail-extensions.ts): every recipient gets our own reply, nothing was sent.
 */
export function notSentResult(recipients: readonly string[], reply: ParsedReply, session: Session): AttemptResult {
  return summarize(recipients.map((r) => recipientResult(r, reply, 'mail')), session);
}

export interface Session {
  mx: string;
  address: string;
  tls: boolean;
  tlsDetail?: TlsDetail;
}

/**
 * A failed transaction. `earlierRejections` are the RCPT replies nodemailer collected before
 * the failure (it does not put them on a DATA or connection error).
 */
export function sendErrorResult(
  recipients: readonly string[],
  err: NodemailerError,
  session: Session,
  earlierRejections: readonly NodemailerError[],
): AttemptResult {
  const rejected = byRecipient([...earlierRejections, ...(err.rejectedErrors ?? [])]);
  const response = typeof err.response === 'string' ? err.response : '';
  const { reply, phase } = failureReply(err, response);
  const results = recipients.map((r) => {
    const own = rejected.get(r);
    return own ? fromRcptError(r, own) : recipientResult(r, reply, phase, response || undefined);
  });
  return summarize(results, session);
}

function failureReply(err: NodemailerError, response: string): { reply: ParsedReply; phase: DeliveryPhase } {
  if (err.code === 'EENVELOPE' || err.code === 'EMESSAGE') {
    if (err.command === 'MAIL FROM' && response) return { reply: parseReply(response), phase: 'mail' };
    if (err.command === 'RCPT TO' && response) return { reply: parseReply(response), phase: 'rcpt' };
    if (err.command === 'DATA' && response) return { reply: parseReply(response), phase: err.code === 'EMESSAGE' ? 'message' : 'data' };
    if (err.code === 'EMESSAGE' && /size larger than allowed/i.test(err.message)) {
      // The server announced a smaller SIZE limit in EHLO (RFC 1870 4): a permanent refusal.
      return { reply: { code: 552, enhancedCode: '5.3.4', text: err.message }, phase: 'mail' };
    }
  }
  // The session broke off (connection lost, timeout, 421): a temporary failure of everything open.
  return { reply: response ? parseReply(response) : { text: localText(err) }, phase: 'connect' };
}

function fromRcptError(recipient: string, err: NodemailerError): RecipientResult {
  const response = typeof err.response === 'string' ? err.response : '';
  return recipientResult(recipient, response ? parseReply(response) : { text: localText(err) }, 'rcpt', response || undefined);
}

function byRecipient(errors: readonly NodemailerError[]): Map<string, NodemailerError> {
  const map = new Map<string, NodemailerError>();
  for (const e of errors) if (e.recipient && !map.has(e.recipient)) map.set(e.recipient, e);
  return map;
}

/** The attempt-level reply: the final DATA reply when something was delivered, else the first failure. */
function summarize(results: RecipientResult[], s: Session): AttemptResult {
  const lead = results.find((r) => r.outcome === 'delivered') ?? results.find((r) => r.outcome === 'deferred') ?? results[0];
  return {
    recipients: results,
    mx: s.mx,
    address: s.address,
    tls: s.tls,
    tlsDetail: s.tlsDetail,
    smtpCode: lead?.smtpCode,
    enhancedCode: lead?.enhancedCode,
    response: lead?.response ?? '',
  };
}

/** "ECONNECTION: connect ECONNREFUSED 127.0.0.2:25" — our own description of a local failure. */
export function localText(err: NodemailerError): string {
  const code = err.originalCode ?? err.code;
  const timeout = err.timeoutType ? ` (${err.timeoutType})` : '';
  return `${code ? code + ': ' : ''}${err.message}${timeout}`;
}

/**
 * "Slow down": a 421 (RFC 5321 3.8, 4.2.1: the service is closing the channel) or a temporary
 * reply the bounce rules file as a rate limit (Gmail 4.7.28, Microsoft 4.7.500 "Server busy",
 * Yahoo [TSS04]...). The destination's idle connections are closed and none is reused.
 */
export function slowsDown(result: AttemptResult): boolean {
  if (result.smtpCode === 421) return true;
  return result.recipients.some((r) => r.smtpCode === 421 || (r.outcome === 'deferred' && r.category === 'rate_limited'));
}

/** The same question for a target that refused the session (a 421 greeting, EHLO or STARTTLS reply). */
export function sessionSlowsDown(f: SessionFailure): boolean {
  if (f.reply.code === 421) return true;
  return f.raw !== undefined && classifyReply({ ...f.reply, phase: f.phase }).category === 'rate_limited';
}
