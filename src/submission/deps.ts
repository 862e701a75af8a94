/**
 * What every submission verb works with, declared apart from the Submission class so that the
 * verb files (transactional.ts, raw.ts, broadcast.ts, ...) and submission.ts, which imports
 * them, do not import each other: the import graph of submission/ has no cycle.
 */
import type { Config } from '../config/schema.js';
import type { PublicUrl } from '../domain/public-url.js';
import type { StorePort } from '../store/port/index.js';
import type { AcceptedMessage } from '../store/port/messages.js';
import type { IdempotencyGate } from './idempotency.js';
import type { DomainRegistry, MessageBuilder } from './ports.js';
import type { IntakeTemplates } from './template-check.js';

/**
 * The settings submission reads: the deny list (policy), the pending accounts' quota (limits),
 * the largest message (smtp.maxMessageSize), and whether and where unsubscribe mail arrives
 * (inbound, domains.returnPathLabel).
 */
export type SubmissionSettings = Pick<Config, 'policy' | 'limits' | 'smtp' | 'inbound' | 'domains'>;

export interface SubmissionDeps {
  store: StorePort;
  config: SubmissionSettings;
  builder: MessageBuilder;
  domains: DomainRegistry;
  /** Base of tracking and unsubscribe links, read when a message is built. */
  publicUrl: PublicUrl;
  idempotency: IdempotencyGate;
  /** Called after messages were committed for delivery (the dispatcher looks at the queue now, metrics count them). */
  onQueued?: (messages: readonly AcceptedMessage[]) => void;
  /** Called when messages committed unfinished were composed and signed and their jobs became due (finishing.ts). */
  onReady?: () => void;
  /** Composes and signs what enqueue committed unfinished, after the commit (finishing.ts; made by Submission). */
  signing: SignatureQueue;
  /** The intake's check of template parts and render of the subject (template-check.ts; made by Submission). */
  templateCheck: IntakeTemplates;
  /** The time scheduledAt is judged against (ms); Date.now by default, a fake clock in tests. */
  now?: () => number;
}

/** The signing stage as enqueue sees it. */
export interface SignatureQueue {
  /** background: a broadcast's messages, finished after the sends that wait (finishing.ts, two lanes). */
  schedule(messageIds: readonly string[], o?: { background?: boolean }): void;
}
