/** Pure record types shared by every layer. Timestamps are ISO 8601 strings (spec section 2). */
import type { StsAttempt, TlsDetail } from './delivery-result.js';
import type { TemplateOrigin } from './template.js';

export type AccountState = 'pending' | 'active' | 'suspended';
export const ACCOUNT_STATES: readonly AccountState[] = ['pending', 'active', 'suspended'];

export interface Account {
  id: string;
  name: string;
  state: AccountState;
  createdAt: string;
  updatedAt: string;
}

export interface ApiKey {
  id: string;
  accountId: string;
  /** null: account-level key; otherwise the one channel this key may act on. */
  channelId: string | null;
  name: string;
  /** First characters of the token, shown in listings so operators can tell keys apart. */
  prefix: string;
  /** SHA-256 of the whole token, hex. The token itself is never stored. */
  hash: string;
  createdAt: string;
  revokedAt: string | null;
}

export type DeliveryType = 'live' | 'sandbox';
export const DELIVERY_TYPES: readonly DeliveryType[] = ['live', 'sandbox'];

export interface Tracking {
  links: boolean;
  opens: boolean;
}

export interface Channel {
  id: string;
  accountId: string;
  name: string;
  deliveryType: DeliveryType;
  tracking: Tracking;
  /** The pool of sending IPs its mail goes out through (issue 35, delivery.pools); absent: its mail type's default pool. */
  ipPool?: string;
  createdAt: string;
  updatedAt: string;
}

/** Who is calling: resolved from an API key by the HTTP and SMTP adapters. */
export interface Principal {
  keyId: string;
  accountId: string;
  channelId: string | null;
}

export type MailType = 'transactional' | 'broadcast';
export const MAIL_TYPES: readonly MailType[] = ['transactional', 'broadcast'];
export type MailSource = 'api' | 'smtp';

/** Spec section 6. */
export const EVENT_TYPES = [
  'accepted', 'processed', 'delivered', 'bounced', 'opened', 'clicked', 'complained', 'unsubscribed', 'resubscribed',
  // Not in the spec: a message canceled before any attempt (issue 34, POST /activity/messages/{id}/cancel).
  'canceled',
] as const;
export type EventType = (typeof EVENT_TYPES)[number];

export interface AddressValue {
  email: string;
  name?: string;
}

export interface AttachmentSummary {
  fileName: string;
  disposition: 'attachment' | 'inline';
  size: number;
  contentType: string;
}

export interface MessageRecord {
  id: string;
  accountId: string;
  channelId: string;
  mailType: MailType;
  mailSource: MailSource;
  deliveryType: DeliveryType;
  broadcastId?: string;
  status: 'queued' | 'sent';
  createdAt: string;
  /** The RFC 5322 Message-ID header value, with angle brackets. */
  messageIdHeader: string;
  subject: string;
  from: AddressValue;
  to: AddressValue[];
  cc: AddressValue[];
  bcc: AddressValue[];
  replyTo: AddressValue[];
  tracking: Tracking;
  tags: string[];
  headers: Record<string, string>;
  metadata: Record<string, string>;
  attachments: AttachmentSummary[];
  text?: string;
  html?: string;
  size: number;
  /** Envelope recipients that will be delivered to (suppressed ones removed), lowercased. */
  recipients: string[];
  /** Recipients dropped because they were suppressed. */
  suppressed: string[];
  /** Delivery jobs not yet finished; the message is `sent` when this reaches 0. */
  openJobs: number;
  /** Seq of its `accepted` event (its messageQueue key); absent in records written before it was kept. */
  acceptedSeq?: number;
  /**
   * A TLS-RPT report this daemon mailed (tls-rpt/mailer.ts): delivery sends it with opportunistic
   * TLS whatever the recipient domain's MTA-STS or DANE policy, and keeps its sessions out of
   * TLS-RPT (RFC 8460 5.3; delivery/attempt.ts). Stored with the message so a restart keeps it.
   */
  tlsReport?: true;
  /** A scheduled send (issue 34): its jobs are not due before this time (ISO 8601, UTC). */
  scheduledAt?: string;
  /**
   * A sandbox message scheduled for later: the recipients its simulated outcome bounces when its
   * time comes (domain/sandbox-outcome.ts), decided at the commit as for one sent now.
   */
  simulatedBounces?: string[];
  /**
   * A sandbox message sent now that is composed or signed after its commit: the recipients its
   * simulated outcome bounces (the others are delivered), recorded when it is finished and not at
   * the commit, so that one that cannot be composed gets only that failure, as a live one would
   * (domain/sandbox-outcome.ts). Gone once recorded.
   */
  simulateWhenFinished?: string[];
  /** Set when POST /activity/messages/{id}/cancel ended it before any attempt; the message is then `sent`. */
  canceledAt?: string;
  /**
   * When its last delivery job ended (delivered, bounced, given up, dropped or canceled): retention
   * keeps the message for retention.days from then (domain/retention-hold.ts). Absent on one that
   * never had a job, and on records written before it was kept.
   */
  finishedAt?: string;
  /** The stored template and version it was sent with (issue 34); its content was committed with the message. */
  template?: TemplateOrigin;
}

export interface EventRecord {
  seq: number;
  accountId: string;
  channelId: string;
  messageId: string;
  mailType: MailType;
  mailSource: MailSource;
  eventType: EventType;
  timestamp: string;
  subject: string;
  recipients: string[];
  tags: string[];
  metadata: Record<string, string>;
  details: Record<string, unknown>;
}

export interface DeliveryAttempt {
  at: string;
  mx?: string;
  smtpCode?: number;
  enhancedCode?: string;
  response: string;
  outcome: 'delivered' | 'deferred' | 'bounced';
  tls?: boolean;
  /** Protocol/cipher of the session, or why it was not encrypted (delivery-result.ts TlsDetail). */
  tlsDetail?: TlsDetail;
  /** The recipient domain's MTA-STS policy that applied (RFC 8461). */
  mtaSts?: StsAttempt;
}

export interface DeliveryJob {
  id: string;
  messageId: string;
  accountId: string;
  channelId: string;
  /** Recipient domain (A-label); all recipients of the job share it. */
  domain: string;
  recipients: string[];
  state: 'queued' | 'leased' | 'done';
  attempts: number;
  createdAt: string;
  dueAt: string;
  leaseUntil?: string;
  history: DeliveryAttempt[];
  /** Set when a broadcast cancel took the job out of the queue before any attempt. */
  canceledAt?: string;
  /**
   * Milliseconds the job was deferred for want of a sending source (a pool refusal: warm-up,
   * shaping, a failing source), which do not count against delivery.maxAgeMs.
   */
  heldMs?: number;
}

export type SuppressionReason = 'bounce' | 'complaint' | 'unsubscribe' | 'manual';

export interface SuppressionRecord {
  email: string;
  channelId: string;
  mailType: MailType;
  reason: SuppressionReason;
  createdAt: string;
}
