/** The shapes of GET /broadcasts and GET /broadcasts/{id} (src/http/response-schemas.ts). */
import type { Address } from './message-types';

export type BroadcastStatus = 'accepted' | 'processing' | 'completed' | 'canceled';
export const BROADCAST_STATUSES: BroadcastStatus[] = ['accepted', 'processing', 'completed', 'canceled'];

export interface BroadcastSummary {
  id: string;
  createdAt: string;
  status: BroadcastStatus;
  subject: string;
  /** Entries handled, whole percent rounded down: "42%". */
  completion: string;
  messages: number;
}

export interface BroadcastDetail extends BroadcastSummary {
  failed: number;
  suppressed: number;
  canceled: number;
  content: {
    from: Address;
    replyTo?: Address[];
    template: { subject: string; html?: string; text?: string };
    attachments: { fileName: string; disposition: string; size: number }[];
    tags: string[];
  };
  tracking: { links: boolean; opens: boolean };
  statistics: { sent: number; delivered: number; bounced: number; opened: number; clicked: number; complained: number; unsubscribed: number };
}

export interface BroadcastFailure {
  recipients: { to: Address[]; cc?: Address[]; bcc?: Address[] };
  messageIndex: number;
  errorCode: string;
  errorMessage: string;
}

/** Still being expanded or delivered: the page refreshes itself. */
export function running(status: BroadcastStatus): boolean {
  return status === 'accepted' || status === 'processing';
}

export function percentOf(completion: string): number {
  const n = Number.parseInt(completion, 10);
  return Number.isFinite(n) ? Math.min(100, Math.max(0, n)) : 0;
}
