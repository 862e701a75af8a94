/**
 * Received messages as data (issue 33): what the inbound listener commits for a routed
 * recipient before its 250, and what processing learns about it afterwards (the verdicts, the
 * POSTs to the route's URL and their answers). Every store engine keeps this record alike.
 */
import type { AuthVerdicts } from './auth-verdicts.js';

export type InboundMessageStatus = 'received' | 'posted' | 'failed';

export interface InboundEnvelope {
  /** The reverse-path; '' for the null sender of bounces (RFC 5321 4.5.5). */
  mailFrom: string;
  /** The recipients of this route only (a message to several routes is one record per route). */
  rcptTo: string[];
}

/** One POST of the payload to the route's URL. */
export interface InboundPostAttempt {
  at: string;
  /** The HTTP status, or null when no answer came (refused, timed out, blocked address). */
  statusCode: number | null;
  /** Why it failed; null for a 2xx. */
  error: string | null;
}

export interface InboundMessage {
  id: string;
  routeId: string;
  accountId: string;
  channelId: string;
  envelope: InboundEnvelope;
  /** The SMTP client's IP address, as SPF evaluates it. */
  clientAddress: string;
  /** The name the client gave in EHLO/HELO. */
  helo: string;
  /** What followed "+" in the routed recipient's local part, or null. */
  mailboxHash: string | null;
  receivedAt: string;
  /** Bytes of the raw message as received. */
  size: number;
  /** The header From's first address, lower-cased, and the Subject: the list's filters (null when absent or unreadable). */
  from: string | null;
  subject: string | null;
  status: InboundMessageStatus;
  attempts: InboundPostAttempt[];
  /** When the next POST is due, while `received`; null once posted or failed. */
  nextAttemptAt: string | null;
  /** When verification ran (processing after the 250); null until then. */
  processedAt: string | null;
  /** The verdicts processing found (inbound/verify.ts), kept so every retry posts the same. */
  auth: AuthVerdicts | null;
}

/** What the listener knows of one routed copy of a message when it commits it. */
export type NewInboundMessage = Pick<
  InboundMessage,
  'routeId' | 'accountId' | 'channelId' | 'envelope' | 'clientAddress' | 'helo' | 'mailboxHash' | 'from' | 'subject'
>;

/** The record of a message just committed: due for processing at once. */
export function receivedMessage(n: NewInboundMessage, o: { id: string; receivedAt: Date; size: number }): InboundMessage {
  const at = o.receivedAt.toISOString();
  return { ...n, id: o.id, receivedAt: at, size: o.size, status: 'received', attempts: [], nextAttemptAt: at, processedAt: null, auth: null };
}

/** How a POST ended, as processing decides it (inbound/poster policy): posted, try again at, or given up. */
export type InboundAttemptEnd = { kind: 'posted' } | { kind: 'retry'; atMs: number } | { kind: 'failed' };

/** The record after an attempt (both engines). */
export function afterAttempt(m: InboundMessage, attempt: InboundPostAttempt, end: InboundAttemptEnd): InboundMessage {
  const attempts = [...m.attempts, attempt];
  if (end.kind === 'retry') return { ...m, attempts, nextAttemptAt: new Date(end.atMs).toISOString() };
  return { ...m, attempts, status: end.kind, nextAttemptAt: null };
}

/** Whether a record passes the list's content filters (both engines apply the same rule). */
export function matchesText(value: string | null, part: string | undefined): boolean {
  return part === undefined || (value !== null && value.toLowerCase().includes(part.toLowerCase()));
}
