/** The shapes of GET /activity/events, /activity/messages and /activity/messages/{id} (src/http/response-schemas.ts). */

export const EVENT_TYPES = ['accepted', 'processed', 'delivered', 'bounced', 'opened', 'clicked', 'complained', 'unsubscribed', 'resubscribed'] as const;
export type EventType = (typeof EVENT_TYPES)[number];

export interface ActivityEvent {
  messageId: string;
  channelId: string;
  mailType: 'transactional' | 'broadcast';
  eventType: EventType;
  timestamp: string;
  subject: string;
  recipients: string[];
  mailSource: string;
  tags: string[];
  metadata: Record<string, string>;
  details?: Record<string, unknown>;
}

/** The fields a message's list item (GET /activity/messages) and its details share. */
interface MessageHeadline {
  messageId: string;
  channelId: string;
  timestamp: string;
  mailType: string;
  mailSource: string;
  deliveryType: 'live' | 'sandbox';
  status: string;
  subject: string;
}

export interface MessageItem extends MessageHeadline {
  recipients: string[];
  /** Absent once retention removed the message record. */
  from?: Address;
}

export interface Address {
  email: string;
  name?: string;
}

export interface DeliveryAttempt {
  domain: string;
  at: string;
  mx?: string;
  smtpCode?: number;
  enhancedCode?: string;
  response: string;
  outcome: 'delivered' | 'deferred' | 'bounced';
  tls?: boolean;
  tlsDetail?: { protocol?: string; cipher?: string; verified?: boolean; verifyError?: string; reason?: string; dane?: string };
  mtaSts?: { mode: 'enforce' | 'testing' | 'none'; id: string; failure?: string };
}

export interface MessageEvent {
  eventType: EventType;
  timestamp: string;
  recipients: string[];
  details?: Record<string, unknown>;
}

export interface MessageDetails extends MessageHeadline {
  from: Address;
  to: Address[];
  cc?: Address[];
  bcc?: Address[];
  replyTo?: Address[];
  events: MessageEvent[];
  text?: string | null;
  html?: string | null;
  body?: string;
  bodyTruncated?: true;
  tags?: string[];
  messageHeaders?: { name: string; value: string }[];
  attachments: { fileName: string; disposition: string; size: number }[];
  statistics: Record<string, number>;
  attempts: DeliveryAttempt[];
}

/** "Ann <ann@…>" or the address alone. */
export function formatAddress(a: Address | undefined): string {
  if (!a) return '';
  return a.name ? `${a.name} <${a.email}>` : a.email;
}
