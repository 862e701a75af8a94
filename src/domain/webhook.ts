/**
 * Webhooks as data: the stored record, its delivery status, an outbox entry, the payload sent,
 * and the pure rules around them (which events a webhook receives, the retry backoff, which
 * request headers a user may add).
 */
import type { EventRecord, EventType } from './types.js';

export interface WebhookHeader {
  name: string;
  value: string;
}

export interface Webhook {
  id: string;
  accountId: string;
  /** null: every channel of the account. */
  channelId: string | null;
  url: string;
  events: EventType[];
  enabled: boolean;
  additionalHeaders: WebhookHeader[];
  createdAt: string;
  updatedAt: string;
}

/** What the last attempt got back, and running counters (kept apart from the record). */
export interface WebhookStatus {
  lastResponse: { statusCode: number | null; error: string | null; at: string } | null;
  /** The event type of the delivery lastResponse answered (absent in statuses written before it was kept). */
  lastEvent?: EventType;
  /** Events the endpoint accepted (2xx). */
  succeeded: number;
  /** Attempts that failed (non-2xx, timeout, connection or address refused). */
  failedAttempts: number;
  /** Events given up on after webhooks.maxAgeMs of retries. */
  failed: number;
  /** Failed attempts since the last success. */
  consecutiveFailures: number;
}

/**
 * A webhook after a PATCH (both engines): each given field replaces its value, channelId null
 * makes it account-wide, an absent one leaves it as it was.
 */
export function patchedWebhook(
  w: Webhook,
  patch: Partial<Pick<Webhook, 'url' | 'events' | 'channelId' | 'enabled' | 'additionalHeaders'>>,
  now: Date,
): Webhook {
  return {
    ...w,
    url: patch.url ?? w.url,
    events: patch.events ?? w.events,
    channelId: patch.channelId === undefined ? w.channelId : patch.channelId,
    enabled: patch.enabled ?? w.enabled,
    additionalHeaders: patch.additionalHeaders ?? w.additionalHeaders,
    updatedAt: now.toISOString(),
  };
}

export const EMPTY_STATUS: WebhookStatus = { lastResponse: null, succeeded: 0, failedAttempts: 0, failed: 0, consecutiveFailures: 0 };

/**
 * The JSON body POSTed to the endpoint (api-surface.md "Webhook payloads"): the fields every
 * event has, `details` among them, plus `recipients` for `accepted` and `processed` (one payload
 * per event), or `recipient` for every other type (one payload per recipient, so a receiver never
 * has to split a delivery or bounce of several recipients itself). The accepted event's details
 * are how a receiver learns that a send is scheduled, and for when (`scheduledAt`).
 */
export type WebhookPayload = PayloadBase & ({ recipients: string[] } | { recipient: string });

interface PayloadBase {
  channelId: string;
  eventType: EventType;
  mailType: string;
  messageId: string;
  subject: string;
  tags: string[];
  metadata: Record<string, string>;
  timestamp: string;
  details: Record<string, unknown>;
}

/** One event waiting to reach one webhook. */
export interface OutboxEntry {
  /** Stable across retries: sent as X-Service-Webhook-Id so receivers can drop duplicates. */
  id: string;
  webhookId: string;
  messageId: string;
  /** The event's seq: orders the entries of one message. */
  seq: number;
  /**
   * Which recipient of the event this entry is for (index into its recipients), for the
   * per-recipient types; absent for accepted/processed and for entries written before 0.2.
   */
  part?: number;
  createdAtMs: number;
  dueAtMs: number;
  attempts: number;
  payload: WebhookPayload;
}

export function webhookWants(w: Webhook, e: Pick<EventRecord, 'accountId' | 'channelId' | 'eventType'>): boolean {
  return w.enabled && w.accountId === e.accountId && (w.channelId === null || w.channelId === e.channelId) && w.events.includes(e.eventType);
}

/** Event types whose payload names all recipients at once; every other type is split per recipient. */
const WHOLE_MESSAGE_TYPES: ReadonlySet<EventType> = new Set(['accepted', 'processed']);

/** The payloads one event becomes, with the recipient index (`part`) of each split one. */
export function payloadsOf(e: EventRecord): { part?: number; payload: WebhookPayload }[] {
  const base: PayloadBase = {
    channelId: e.channelId,
    eventType: e.eventType,
    mailType: e.mailType,
    messageId: e.messageId,
    subject: e.subject,
    tags: e.tags,
    metadata: e.metadata,
    timestamp: e.timestamp,
    details: e.details,
  };
  if (WHOLE_MESSAGE_TYPES.has(e.eventType)) return [{ payload: { ...base, recipients: e.recipients } }];
  return e.recipients.map((recipient, part) => ({ part, payload: { ...base, recipient } }));
}

/** No single wait is longer than this, however many attempts failed. */
export const MAX_RETRY_DELAY_MS = 4 * 3_600_000;

/**
 * Exponential backoff: the delay after failed attempt n (1-based) is base * 2^(n-1), at most
 * MAX_RETRY_DELAY_MS (10 s, 20 s, 40 s, ... 2.8 h, 4 h, 4 h ... with the default base).
 */
export function retryDelayMs(attempts: number, baseMs: number): number {
  const exp = Math.min(Math.max(attempts, 1) - 1, 40);
  return Math.min(baseMs * 2 ** exp, Math.max(MAX_RETRY_DELAY_MS, baseMs));
}

/** RFC 7230 3.2.6: a header name is a token. */
export const HEADER_NAME_PATTERN = "^[!#$%&'*+.^_`|~0-9A-Za-z-]+$";
/**
 * RFC 7230 3.2: visible characters, spaces and tabs; never CR/LF or other controls. Exactly what
 * Node's HTTP client sends (tab, U+0020-U+007E and, as single bytes, U+0080-U+00FF): a value
 * beyond U+00FF makes every request throw, so a webhook or route carrying one could never deliver.
 */
export const HEADER_VALUE_PATTERN = '^[\\t\\u0020-\\u007e\\u0080-\\u00ff]*$';

/** Headers postrider writes itself, or that would change how the request is framed or routed. */
const RESERVED_HEADERS = new Set([
  'host',
  'content-type',
  'content-length',
  'content-encoding',
  'transfer-encoding',
  'connection',
  'keep-alive',
  'upgrade',
  'te',
  'trailer',
  'expect',
  'user-agent',
  'proxy-authorization',
  'proxy-connection',
  'x-service-webhook-signature',
  'x-service-webhook-id',
  'x-service-webhook-attempt',
  'x-service-webhook-test',
]);

export function isReservedHeader(name: string): boolean {
  return RESERVED_HEADERS.has(name.toLowerCase());
}
