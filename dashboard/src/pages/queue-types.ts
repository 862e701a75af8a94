/** The shapes of GET /queue and GET /queue/messages (src/http/response-schemas.ts, queue/account-queue.ts). */
export interface LastReply {
  at: string;
  mx?: string;
  smtpCode?: number;
  enhancedCode?: string;
  response: string;
  outcome: 'delivered' | 'deferred' | 'bounced';
}

export interface QueueDestination {
  destination: string;
  /** The MX site delivery counts the destination's connections under (the domain until resolved). */
  site: string;
  messages: number;
  sending: number;
  oldestQueuedAt: string;
  nextAttemptAt: string | null;
  lastReply: LastReply | null;
}

export interface QueueSummary {
  results: QueueDestination[];
  destinationCount: number;
  scannedMessages: number;
  /** False when the scan stopped at its cap: the counts cover the oldest messages only. */
  complete: boolean;
}

export interface QueueJob {
  destination: string;
  recipients: string[];
  state: 'queued' | 'sending' | 'done';
  attempts: number;
  nextAttemptAt: string | null;
  lastReply: LastReply | null;
}

export interface QueueMessage {
  messageId: string;
  channelId: string;
  subject: string;
  status: 'queued' | 'sent';
  queuedAt: string;
  to: string[];
  attempts: number;
  nextAttemptAt: string | null;
  lastReply: LastReply | null;
  destinations: QueueJob[];
}

/** "451 4.7.1 Greylisted" as the reply reads; the MX host apart. */
export function replyText(r: LastReply): string {
  const code = [r.smtpCode, r.enhancedCode].filter((x) => x !== undefined).join(' ');
  return r.response.startsWith(code) || !code ? r.response : `${code} ${r.response}`;
}
