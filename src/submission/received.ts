/**
 * The Received trace field SMTP submission prepends to each message it accepts (RFC 5321 4.4:
 * an SMTP server MUST insert one when it accepts a message for relaying or final delivery).
 * The protocol name follows RFC 3848: ESMTPA for an authenticated session, ESMTPSA when it also
 * ran over TLS (STARTTLS or implicit TLS, RFC 8314). Messages sent through the HTTP API get no
 * Received field: RFC 5321 4.4 is about SMTP servers receiving mail, and a message composed from
 * an API request has no previous SMTP hop to trace; the receiving MX records our hop itself.
 * A raw message this daemon wrote itself (a TLS-RPT report, tls-rpt/mailer.ts) goes through the
 * same path and gets a field that says so (localReceivedField), not a made-up SMTP session.
 */
import { rfc5322Date } from '../domain/date-header.js';
import type { HeaderField } from '../domain/raw-headers.js';

/** Where the message came from: an SMTP session, or this daemon itself. */
export type ReceivedTrace = SmtpTrace | LocalTrace;

/** What the listener saw of the session; helo and address are null when the operator hides them. */
export interface SmtpTrace {
  /** Our host name (the "by" clause). */
  by: string;
  /** The EHLO argument, already checked by the SMTP library as a host name or address literal. */
  helo: string | null;
  /** The client's IP address as the socket reports it. */
  address: string | null;
  secure: boolean;
}

/** A message this daemon wrote itself (a TLS-RPT report): no client, no session. */
export interface LocalTrace {
  by: string;
  /** What wrote it, as a comment of the field; no parentheses or backslashes. */
  local: string;
}

/**
 * The field, folded before "by" and before the date so that no line is long (RFC 5322 2.1.1).
 * Without the client's name and address (smtp.receivedClientInfo false) the FROM clause, which
 * RFC 5321 4.4 requires, names no one: "from unknown", the placeholder Postfix writes for a
 * client whose name it does not know.
 */
export function receivedField(trace: ReceivedTrace, messageId: string, date: Date, eol: string): HeaderField {
  if ('local' in trace) return localReceivedField(trace, messageId, date, eol);
  const from = trace.helo === null || trace.address === null ? 'unknown' : `${trace.helo} (${addressLiteral(trace.address)})`;
  const protocol = trace.secure ? 'ESMTPSA' : 'ESMTPA';
  const raw = `Received: from ${from}${eol}\tby ${trace.by} with ${protocol} id ${messageId};${eol}\t${rfc5322Date(date)}`;
  return { name: 'Received', raw };
}

/**
 * The field of a message generated here: "from localhost", the host it was made on, which is
 * what RFC 5321 4.4's FROM clause names; no WITH clause, which is optional there (Opt-info): no
 * protocol carried the message, and the IANA "WITH protocol types" registry has only SMTP and
 * LMTP variants (RFC 5321, 3848, 6531) while SMTP servers "SHOULD NOT use unregistered names"
 * (4.4), so neither ESMTPA nor an invented LOCAL. The comment before ";" ([CFWS] in Stamp) says
 * what wrote it.
 */
function localReceivedField(trace: LocalTrace, messageId: string, date: Date, eol: string): HeaderField {
  const raw = `Received: from localhost${eol}\tby ${trace.by} id ${messageId}${eol}\t(${trace.local});${eol}\t${rfc5322Date(date)}`;
  return { name: 'Received', raw };
}

/**
 * RFC 5321 4.1.3 address literal: [192.0.2.1], or [IPv6:2001:db8::1]. The listener does not look
 * up the client's reverse name (disableReverseLookup), so TCP-info is the literal alone.
 */
function addressLiteral(ip: string): string {
  const v4 = ip.replace(/^::ffff:(?=\d+\.\d+\.\d+\.\d+$)/i, '');
  return v4.includes(':') ? `[IPv6:${v4}]` : `[${v4}]`;
}
