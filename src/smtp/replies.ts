/**
 * The one place where postrider errors become SMTP replies (RFC 5321 4.2 codes with RFC 3463
 * enhanced status codes from the error catalogue). An error we did not make is an internal
 * fault: 451 4.3.0, so the client retries later and the message is not lost.
 */
import { ERROR_CATALOGUE, isAppError } from '../domain/errors.js';

export interface SmtpReplyError extends Error {
  responseCode: number;
}

/** smtp-server sends err.message after the code; server.ts keeps our enhanced code in front. */
export function smtpError(code: number, enhanced: string, text: string): SmtpReplyError {
  const err = new Error(`${enhanced} ${text.replace(/[\r\n]+/g, ' ')}`) as SmtpReplyError;
  err.responseCode = code;
  return err;
}

export function toSmtpError(err: unknown): { reply: SmtpReplyError; internal: boolean } {
  if (isAppError(err)) {
    const { code, enhanced } = ERROR_CATALOGUE[err.code].smtp;
    return { reply: smtpError(code, enhanced, err.message), internal: err.code === 'internal_error' };
  }
  return { reply: smtpError(451, '4.3.0', 'Internal error, please try again later'), internal: true };
}

export const ENHANCED_PREFIX = /^([245]\.\d{1,3}\.\d{1,3}) /;
