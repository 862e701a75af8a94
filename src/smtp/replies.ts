/**
 * The one place where postrider errors become SMTP replies (RFC 5321 4.2 codes with RFC 3463
 * enhanced status codes). Errors of the submission path come from the error catalogue
 * (domain/errors.ts); conditions that only exist on the SMTP listener (connection limits,
 * timeouts, AUTH throttling, shutdown, the inbound listener's relay refusal, the 250s) are listed
 * once in SMTP_REPLIES below, so no reply is written inline elsewhere. An error we did
 * not make is an internal fault: 451 4.3.0, so the client retries later and the message is not
 * lost.
 */
import { ERROR_CATALOGUE, isAppError } from '../domain/errors.js';

export interface SmtpReplyError extends Error {
  responseCode: number;
}

/**
 * Replies that belong to the SMTP listener alone. docs/smtp-submission.md documents each one and
 * test/unit/smtp-replies.test.ts keeps the two in step.
 */
export const SMTP_REPLIES = {
  // RFC 5321 3.8 / 4.2.3: 421 closes the session; 4.3.2 "system not accepting network messages".
  shuttingDown: { code: 421, enhanced: '4.3.2', text: 'Service shutting down, try again later' },
  listenerFull: { code: 421, enhanced: '4.3.2', text: 'Too many connections, try again later' },
  // RFC 3463 X.7.0: a security policy (per-address caps, AUTH deadline, AUTH throttling).
  tooManyFromAddress: { code: 421, enhanced: '4.7.0', text: 'Too many connections from your address, try again later' },
  authTimeout: { code: 421, enhanced: '4.7.0', text: 'Authentication not completed in time, closing connection' },
  authThrottled: { code: 421, enhanced: '4.7.0', text: 'Too many failed authentication attempts from your address; try again later' },
  // RFC 4954 6: 454 4.7.0 "temporary authentication failure"; the session stays open.
  authUserLocked: { code: 454, enhanced: '4.7.0', text: 'Too many failed authentication attempts for this user; try again later' },
  authInvalid: { code: 535, enhanced: '5.7.8', text: 'Authentication credentials invalid' },
  // Still RFC 4954's 535 5.7.8, but the key was valid: only the user name does not fit its kind
  // (submitter.ts), so saying which user name fits reveals nothing the key's holder lacks.
  authAccountKeyUser: {
    code: 535,
    enhanced: '5.7.8',
    text: 'Authentication credentials invalid: this is an account-level API key, so the user name must be the id of the channel to send through (the user name "api" is for channel keys)',
  },
  authChannelKeyUser: {
    code: 535,
    enhanced: '5.7.8',
    text: 'Authentication credentials invalid: this API key belongs to another channel; use "api" or its own channel\'s id as the user name, or an account-level key',
  },
  authNoSuchChannel: {
    code: 535,
    enhanced: '5.7.8',
    text: "Authentication credentials invalid: the user name is not the id of a channel of this API key's account",
  },
  // RFC 4616 2: an authorization identity other than the authentication identity asks to act as
  // someone else, which the server must refuse unless that is allowed; postrider allows it to no one.
  authzidRefused: {
    code: 535,
    enhanced: '5.7.8',
    text: 'Authentication credentials invalid: the authorization identity (authzid) must be empty or the user name; acting as another identity is not supported',
  },
  encryptionRequired: { code: 538, enhanced: '5.7.11', text: 'Encryption required: issue STARTTLS first' },
  badSender: { code: 553, enhanced: '5.1.7', text: 'Bad sender address' },
  badRecipient: { code: 553, enhanced: '5.1.3', text: 'Bad recipient address' },
  // RFC 5321 4.5.3.1.8: a server may limit recipients per transaction; 452 asks for the rest later.
  tooManyRecipients: { code: 452, enhanced: '4.5.3', text: 'Too many recipients' },
  // RFC 1870 6.2 / RFC 3463 X.3.4: the message is larger than the limit advertised in EHLO SIZE.
  messageTooLarge: { code: 552, enhanced: '5.3.4', text: 'Message exceeds the maximum size' },
  // RFC 5322 2.3 and RFC 5321 4.1.1.4: a message may not carry NUL, and many receivers refuse one
  // that does; refused at the final dot rather than passed on to fail there. RFC 3463 X.6.0: media error.
  messageHasNul: { code: 554, enhanced: '5.6.0', text: 'Message contains NUL characters, which mail may not carry' },
  // RFC 4954 6: 530 5.7.0 "authentication required", to MAIL/RCPT/DATA before AUTH (the library
  // sends it, with this text: server.ts passes it as authRequiredMessage).
  authRequired: { code: 530, enhanced: '5.7.0', text: 'Authentication required' },
  // Inbound listener (inbound/listener.ts). RFC 5321 3.6.2 / 7.1: a server that is not a relay
  // refuses every recipient it does not receive for: one that no inbound route matches and that
  // is no bounce address, X.1.1 "bad destination mailbox address" (RFC 3463; issue 33).
  noSuchMailbox: { code: 550, enhanced: '5.1.1', text: 'No such mailbox: this host accepts mail only for routed addresses and its bounce addresses' },
  // The inbound session's deadline (inbound.sessionTimeoutMs): a client that trickles its
  // commands or its message cannot hold a connection for ever (X.7.0, a security policy).
  sessionTimeout: { code: 421, enhanced: '4.7.0', text: 'Session took too long, closing connection' },
  // Success replies to DATA (RFC 3463 X.0.0 "other or undefined status": accepted, no more to say).
  queued: { code: 250, enhanced: '2.0.0', text: 'Ok: queued as' },
  received: { code: 250, enhanced: '2.0.0', text: 'Ok' },
} as const satisfies Record<string, { code: number; enhanced: string; text: string }>;

export type SmtpReplyName = keyof typeof SMTP_REPLIES;

/** smtp-server sends err.message after the code; wire-server.ts keeps our enhanced code in front. */
export function smtpError(code: number, enhanced: string, text: string): SmtpReplyError {
  const err = new Error(`${enhanced} ${text.replace(/[\r\n]+/g, ' ')}`) as SmtpReplyError;
  err.responseCode = code;
  return err;
}

/** One of SMTP_REPLIES, with an optional detail after its text ("Bad sender address: ..."). */
export function smtpReply(name: SmtpReplyName, detail?: string): SmtpReplyError {
  const r = SMTP_REPLIES[name];
  return smtpError(r.code, r.enhanced, detail ? `${r.text}: ${detail}` : r.text);
}

/**
 * The text of a success reply (smtp-server writes the code; a DATA callback's message follows
 * it), enhanced code in front: "2.0.0 Ok: queued as <id>".
 */
export function smtpOk(name: 'queued' | 'received', detail?: string): string {
  const r = SMTP_REPLIES[name];
  return `${r.enhanced} ${detail ? `${r.text} ${detail}` : r.text}`;
}

/** An internal fault (the catalogue's internal_error): 451 4.3.0, so the client retries later. */
export function internalReply(): SmtpReplyError {
  const { code, enhanced } = ERROR_CATALOGUE.internal_error.smtp;
  return smtpError(code, enhanced, 'Internal error, please try again later');
}

/** The reply as one wire line (for the few places that write to a socket themselves). */
export function replyLine(err: SmtpReplyError): string {
  return `${err.responseCode} ${err.message}\r\n`;
}

export function toSmtpError(err: unknown): { reply: SmtpReplyError; internal: boolean } {
  if (isAppError(err)) {
    const { code, enhanced } = ERROR_CATALOGUE[err.code].smtp;
    return { reply: smtpError(code, enhanced, err.message), internal: err.code === 'internal_error' };
  }
  return { reply: internalReply(), internal: true };
}

export const ENHANCED_PREFIX = /^([245]\.\d{1,3}\.\d{1,3}) /;
