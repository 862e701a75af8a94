/**
 * The one submission path shared by every ingress (HTTP now, SMTP later): validation, policy,
 * suppressions, idempotency, rendering and signing, durable enqueue.
 */
import type { Config } from '../config/schema.js';
import type { PublicUrl } from '../domain/public-url.js';
import type { Store } from '../store/env.js';
import type { AcceptedMessage } from '../store/messages.js';
import { sweepIdempotency } from '../store/idempotency.js';
import { IdempotencyGate } from './idempotency.js';
import type { DomainRegistry, MessageBuilder } from './ports.js';
import { sendBroadcastMessage, sendTransactional, type TransactionalRequest, type TransactionalResponse } from './transactional.js';
import { sendTransactionalBatch, type BatchRequest, type BatchResponse } from './transactional-batch.js';
import { sendBroadcast, type BroadcastRequest, type BroadcastResponse } from './broadcast.js';
import { BroadcastExpander } from './broadcast-expander.js';
import { submitRaw, type RawSubmission } from './raw.js';
import type { Logger } from 'pino';

export interface SubmissionDeps {
  store: Store;
  config: Config;
  builder: MessageBuilder;
  domains: DomainRegistry;
  /** Base of tracking and unsubscribe links, read when a message is built. */
  publicUrl: PublicUrl;
  idempotency: IdempotencyGate;
  /** Called after messages were committed for delivery (the dispatcher looks at the queue now, metrics count them). */
  onQueued?: (messages: readonly AcceptedMessage[]) => void;
}

export class Submission {
  readonly deps: SubmissionDeps;
  readonly expander: BroadcastExpander;
  private sweeper: NodeJS.Timeout | null = null;
  private readonly logger: Logger;

  constructor(opts: Omit<SubmissionDeps, 'idempotency'> & { logger: Logger }) {
    const { logger, ...deps } = opts;
    this.logger = logger;
    this.deps = { ...deps, idempotency: new IdempotencyGate(opts.store) };
    this.expander = new BroadcastExpander(this.deps, logger.child({ component: 'broadcast' }));
  }

  async start(): Promise<void> {
    await this.expander.start();
    // Expired idempotency keys leave the store every minute (DESIGN.md: one hour window).
    this.sweeper = setInterval(() => {
      sweepIdempotency(this.deps.store, Date.now()).catch((err) => this.logger.warn({ err }, 'idempotency sweep failed'));
    }, 60_000);
    this.sweeper.unref();
  }

  async stop(): Promise<void> {
    await this.expander.stop();
    if (this.sweeper) clearInterval(this.sweeper);
    this.sweeper = null;
  }

  transactional(req: TransactionalRequest): Promise<TransactionalResponse> {
    return sendTransactional(this.deps, req);
  }

  transactionalBatch(req: BatchRequest): Promise<BatchResponse> {
    return sendTransactionalBatch(this.deps, req);
  }

  broadcastMessage(req: TransactionalRequest): Promise<TransactionalResponse> {
    return sendBroadcastMessage(this.deps, req);
  }

  raw(sub: RawSubmission): Promise<{ messageId: string; suppressed: string[] }> {
    return submitRaw(this.deps, sub);
  }

  broadcast(req: BroadcastRequest): Promise<BroadcastResponse> {
    return sendBroadcast({ ...this.deps, onAccepted: () => this.expander.kick() }, req);
  }
}
