/**
 * The signing stage: DKIM signatures (RFC 6376) are made after the commit, not before the 200 or
 * the 250. enqueue() hands it the ids of the messages it committed unsigned; it reads each
 * committed body, signs it in the worker pool with the domain's key of that moment, and stores
 * the signed body, which makes the message's jobs due (store/signing.ts). At start it signs what
 * a stop or a crash left unsigned, from what was committed.
 *
 * The key is looked up when signing, not at intake: a key rotated in between is the one whose
 * DNS record receivers will find when the message arrives, while the replaced one may already
 * be unpublished (domains keep only the active and the pending key). The worst case is a
 * message committed just before a rotation and signed just after it: it carries the new key,
 * which is what the domain publishes now.
 */
import type { Logger } from 'pino';
import { isAppError } from '../domain/errors.js';
import type { Store } from '../store/env.js';
import { pendingSignatures, storeSignedBodies, unsignedMessage } from '../store/signing.js';
import type { DomainRegistry, MessageBuilder } from './ports.js';

export interface SigningStageOptions {
  store: Store;
  /** The worker pool's sign task (builder.ts), which reports each signature's time to the metrics. */
  builder: Pick<MessageBuilder, 'sign'>;
  domains: Pick<DomainRegistry, 'signingKey'>;
  logger: Logger;
  /** Told when signed messages' jobs became due (the dispatcher looks at the queue). */
  onReady?: () => void;
  /** Signatures in the pool at once: enough to keep its threads busy, few enough that stop() is quick. */
  concurrency?: number;
  /** Wait before a failed signature is tried again. */
  retryMs?: number;
}

/** A full store is retried soon and more slowly each time (as delivery's recordDurably does): space usually returns within seconds. */
const FULL_RETRY_FIRST_MS = 250;
const FULL_RETRY_MAX_MS = 10_000;

export class SigningStage {
  private readonly waiting = new Set<string>();
  /** Failed tries per message since its last success, for the storage-full backoff. */
  private readonly tries = new Map<string, number>();
  private readonly running = new Map<string, Promise<void>>();
  private readonly concurrency: number;
  private readonly retryMs: number;
  private readonly retryTimers = new Set<NodeJS.Timeout>();
  private started = false;
  /** Signed bodies waiting for the next write: the signatures that finish together share one. */
  private signed: Array<{ messageId: string; body: Uint8Array }> = [];
  private write: Promise<void> | null = null;

  constructor(private readonly o: SigningStageOptions) {
    this.concurrency = o.concurrency ?? 16;
    this.retryMs = o.retryMs ?? 30_000;
  }

  /** Picks up every message left unsigned by the last run. */
  async start(): Promise<void> {
    this.started = true;
    const left = pendingSignatures(this.o.store);
    if (left.length > 0) this.o.logger.info({ messages: left.length }, 'signing messages committed before the last stop');
    this.schedule(left);
  }

  /** Stops taking work and waits for the signatures in the pool; what is left is signed at the next start. */
  async stop(): Promise<void> {
    this.started = false;
    this.waiting.clear();
    for (const t of this.retryTimers) clearTimeout(t);
    this.retryTimers.clear();
    this.tries.clear();
    await Promise.allSettled(this.running.values());
  }

  /** Messages committed unsigned a moment ago; ids already waiting or in the pool are not taken twice. */
  schedule(messageIds: readonly string[]): void {
    if (!this.started) return; // start() finds them in the store
    for (const id of messageIds) if (!this.running.has(id)) this.waiting.add(id);
    this.pump();
  }

  /** Messages waiting for a signature or being signed now (tests, metrics). */
  get backlog(): number {
    return this.waiting.size + this.running.size;
  }

  private pump(): void {
    for (const id of this.waiting) {
      if (this.running.size >= this.concurrency) return;
      this.waiting.delete(id);
      const run = this.signOne(id)
        .then(() => void this.tries.delete(id))
        .catch((err: unknown) => this.failed(id, err))
        .finally(() => {
          this.running.delete(id);
          if (this.started) this.pump();
        });
      this.running.set(id, run);
    }
  }

  /** Signs one committed message with its domain's current key (none any more: sent unsigned). */
  private async signOne(messageId: string): Promise<void> {
    const pending = unsignedMessage(this.o.store, messageId);
    if (!pending) return;
    // The message went before its signature: storing "nothing" only ends its wait.
    if (!pending.body) return this.store({ messageId, body: new Uint8Array(0) });
    const key = this.o.domains.signingKey({ accountId: pending.accountId, domainName: pending.domain });
    if (!key) this.o.logger.warn({ messageId, domain: pending.domain }, 'the domain has no DKIM key any more: message sent unsigned');
    const body = key ? await this.o.builder.sign({ raw: pending.body, dkim: key }) : pending.body;
    await this.store({ messageId, body });
  }

  /** Resolves when the body is stored, in one write with the others signed by then. */
  private store(item: { messageId: string; body: Uint8Array }): Promise<void> {
    this.signed.push(item);
    this.write ??= new Promise<void>((resolve) => setImmediate(resolve)).then(async () => {
      const items = this.signed;
      this.signed = [];
      this.write = null;
      if ((await storeSignedBodies(this.o.store, items)) > 0) this.o.onReady?.();
    });
    return this.write;
  }

  /** The entry stays in the store: tried again later, or at the next start if we are stopping. */
  private failed(messageId: string, err: unknown): void {
    if (!this.started) return;
    const tries = (this.tries.get(messageId) ?? 0) + 1;
    this.tries.set(messageId, tries);
    const full = isAppError(err) && err.code === 'storage_full';
    if (!full) this.o.logger.error({ err, messageId }, 'DKIM signing after the commit failed; the message waits and is tried again');
    else if (tries === 1) this.o.logger.warn({ messageId }, 'storage full while storing a signed message; retrying until space returns');
    const wait = full ? Math.min(FULL_RETRY_FIRST_MS * 2 ** (tries - 1), FULL_RETRY_MAX_MS) : this.retryMs;
    const timer = setTimeout(() => {
      this.retryTimers.delete(timer);
      this.schedule([messageId]);
    }, wait);
    timer.unref();
    this.retryTimers.add(timer);
  }
}
