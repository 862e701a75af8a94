/**
 * The one submission path shared by every ingress (HTTP and SMTP): validation, policy,
 * suppressions, idempotency, rendering, durable enqueue, then DKIM signing after the commit
 * (finishing.ts). The adapters parse their protocol, call one verb here and map its result or
 * AppError to the wire.
 */
import type { Logger } from 'pino';
import type { SubmissionDeps } from './deps.js';
import { checkEnvelopeRecipient, checkEnvelopeSender } from './envelope.js';
import { IntakeTemplates } from './template-check.js';
import { IdempotencyGate } from './idempotency.js';
import { authenticateSubmitter, type Submitter, type SubmitterResult } from './submitter.js';
import { sendBroadcastMessage, sendTransactional, type TransactionalRequest, type TransactionalResponse } from './transactional.js';
import { sendTransactionalBatch, type BatchRequest, type BatchResponse } from './transactional-batch.js';
import { sendBroadcast, type BroadcastRequest, type BroadcastResponse } from './broadcast.js';
import { BroadcastExpander } from './broadcast-expander.js';
import { submitRaw, type RawAccepted, type RawSubmission } from './raw.js';
import { FinishingStage } from './finishing.js';
import { sendChannel } from './channel.js';
import { addSenderFieldErrorOf } from './sender.js';
import type { FieldErrorList } from '../domain/errors.js';
import type { Principal } from '../domain/types.js';
import type { Coordination } from '../coordination/port.js';
import { LocalCoordination } from '../coordination/local.js';

export type SubmissionOptions = Omit<SubmissionDeps, 'idempotency' | 'signing' | 'templateCheck'> & {
  logger: Logger;
  /**
   * Wake-ups and ownership of the two shared backlogs (broadcast expansion, the finishing
   * stage). Default: a LocalCoordination of its own (node 'local'), which always grants: what
   * one daemon did before the port, and what tests that build a Submission alone need.
   */
  coordination?: Coordination;
};

export class Submission {
  readonly deps: SubmissionDeps;
  readonly expander: BroadcastExpander;
  /** Composition and DKIM signing after the commit (finishing.ts). */
  readonly signing: FinishingStage;
  private sweeper: NodeJS.Timeout | null = null;
  private readonly logger: Logger;
  readonly coordination: Coordination;

  constructor(opts: SubmissionOptions) {
    const { logger, coordination, ...deps } = opts;
    this.logger = logger;
    this.coordination = coordination ?? new LocalCoordination({ nodeId: 'local' });
    const { store, builder, domains, onReady } = opts;
    // The size limit an API send's estimate was checked against at intake, now on the composed message.
    const maxMessageSize = opts.config.smtp.maxMessageSize;
    const { coordination: c } = this;
    this.signing = new FinishingStage({ store, builder, domains, onReady, maxMessageSize, coordination: c, logger: logger.child({ component: 'signing' }) });
    const templateCheck = new IntakeTemplates((parts) => builder.checkTemplate(parts));
    this.deps = { ...deps, idempotency: new IdempotencyGate(opts.store.idempotency), signing: this.signing, templateCheck };
    this.expander = new BroadcastExpander(this.deps, logger.child({ component: 'broadcast' }), { coordination: c });
  }

  async start(): Promise<void> {
    // Before the expander, whose first batches it signs; it signs what the last run left unsigned.
    await this.signing.start();
    await this.expander.start();
    // Expired idempotency keys leave the store every minute (DESIGN.md: one hour window).
    this.sweeper = setInterval(() => {
      this.deps.store.idempotency.sweep(Date.now()).catch((err) => this.logger.warn({ err }, 'idempotency sweep failed'));
    }, 60_000);
    this.sweeper.unref();
  }

  async stop(): Promise<void> {
    await this.expander.stop();
    if (this.sweeper) clearInterval(this.sweeper);
    this.sweeper = null;
    // After the expander (which may still commit a batch); before the pool stops (daemon.ts).
    await this.signing.stop();
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

  /**
   * A send whose body failed its schema: the sender domain's field error joins the schema's in
   * the one 422 (sender.ts addSenderFieldError). Nothing is added when the channel cannot be
   * resolved (its own error is answered once the body is valid) or `from` is no valid address.
   */
  async addSenderFieldError(q: { principal: Principal; channelHeader?: string; from: unknown }, errors: FieldErrorList): Promise<void> {
    let channel;
    try {
      channel = await sendChannel(this.deps.store, q);
    } catch {
      return;
    }
    await addSenderFieldErrorOf(this.deps, { accountId: q.principal.accountId, channel, from: q.from }, errors);
  }

  /** SMTP AUTH: the channel and key these credentials name, null, or why the user name does not fit the key. */
  authenticate(username: string, password: string): Promise<SubmitterResult> {
    return authenticateSubmitter(this.deps.store, username, password);
  }

  /** SMTP MAIL FROM (RFC 5321 3.3): throws the AppError that refuses this sender. */
  checkSender(who: Submitter, from: string): Promise<void> {
    return checkEnvelopeSender(this.deps, who, from);
  }

  /** SMTP RCPT TO, one recipient at a time: throws the AppError that refuses this recipient. */
  checkRecipient(who: Submitter, to: string): Promise<void> {
    return checkEnvelopeRecipient(this.deps, who, to);
  }

  /** SMTP DATA: the whole message, checked and committed before the 250 (signed after it). */
  submitRaw(sub: RawSubmission): Promise<RawAccepted> {
    return submitRaw(this.deps, sub);
  }

  broadcast(req: BroadcastRequest): Promise<BroadcastResponse> {
    // Every node's expander hears it (this one's subscribed in its start()).
    return sendBroadcast({ ...this.deps, onAccepted: () => this.coordination.wake('broadcasts') }, req);
  }
}
