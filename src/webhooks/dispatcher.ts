/**
 * WebhookDispatcher: sends outbox entries to their webhooks.
 *
 *   claim due entries (one write: sees every event committed before) → resolve and check the
 *   target → signed POST → recordAttempt (one write: done, retry later, or give up) → pump again
 *
 * It never polls busily: it wakes when a transaction put outbox entries (the coordination's
 * 'outbox' wake-up, which the daemon feeds from the engine's outbox signal), when an
 * attempt finishes, at the next due time, and once a minute at most while idle (entries written
 * by another process, such as the CLI). Timers are unref()'d. Each webhook has at most
 * webhooks.concurrency requests in flight, so a slow endpoint holds back only its own entries;
 * the others keep flowing. stop() waits for requests in flight up to shutdown.graceMs, then
 * aborts them; an aborted entry stays in the outbox and is sent again after the restart.
 */
import type { Config } from '../config/schema.js';
import type { Coordination } from '../coordination/port.js';
import { retryDelayMs } from '../domain/webhook.js';
import type { Logger } from '../log/logger.js';
import { systemClock, type Clock } from '../queue/clock.js';
import { WorkLoop } from '../queue/work-loop.js';
import type { StorePort } from '../store/port/index.js';
import type { Claim } from '../store/port/webhooks.js';
import { postWebhook, type PostFn, type PostResult } from './http-post.js';
import { pinnedAgents, type PinnedAgents } from './pinned-agent.js';
import { RESPONSE_BYTES, sendSigned } from './request.js';
import type { WebhookTargets } from './targets.js';
import { settledWithin } from '../domain/settle.js';

/** The configuration the dispatcher reads. */
export type WebhookDispatcherSettings = Pick<Config, 'webhooks'> & { shutdown: Pick<Config['shutdown'], 'graceMs'> };

export interface WebhookDispatcherOptions {
  store: Pick<StorePort, 'webhookOutbox'>;
  /** Its 'outbox' wake-up (from any node, in a cluster) tells the dispatcher a commit put entries. */
  coordination: Pick<Coordination, 'onWake'>;
  config: WebhookDispatcherSettings;
  targets: WebhookTargets;
  logger: Logger;
  clock?: Clock;
  /** Replaces the HTTP request (tests). */
  post?: PostFn;
  /** Requests in flight over all webhooks at most. Default 64. */
  maxInFlight?: number;
  /** Bytes of a response body read at most. Default RESPONSE_BYTES (4 KiB). */
  maxResponseBytes?: number;
  /** Longest sleep while idle. Default 60 s. */
  idleCheckMs?: number;
}

interface InFlight {
  webhookId: string;
  abort: AbortController;
  done: Promise<void>;
}

const ERROR_BACKOFF_MS = 5_000;

export class WebhookDispatcher {
  private readonly store: Pick<StorePort, 'webhookOutbox'>;
  private readonly settings: Config['webhooks'];
  private readonly graceMs: number;
  private readonly logger: Logger;
  private readonly clock: Clock;
  private readonly post: PostFn;
  private readonly maxInFlight: number;
  private readonly maxResponseBytes: number;
  private readonly idleCheckMs: number;
  private readonly inFlight = new Map<string, InFlight>();
  private readonly perWebhook = new Map<string, number>();
  private agents: PinnedAgents | undefined;
  private unsubscribe: (() => void) | undefined;
  private running = false;
  private stopping = false;
  private readonly loop: WorkLoop;

  constructor(private readonly o: WebhookDispatcherOptions) {
    this.store = o.store;
    this.settings = o.config.webhooks;
    this.graceMs = o.config.shutdown.graceMs;
    this.logger = o.logger.child({ component: 'webhooks' });
    this.clock = o.clock ?? systemClock();
    this.post = o.post ?? postWebhook;
    this.maxInFlight = o.maxInFlight ?? 64;
    this.maxResponseBytes = o.maxResponseBytes ?? RESPONSE_BYTES;
    this.idleCheckMs = o.idleCheckMs ?? 60_000;
    this.loop = new WorkLoop({
      clock: this.clock,
      round: () => this.fill(),
      onError: (err) => this.logger.error({ err }, 'webhook dispatcher could not read the outbox'),
      retryMs: ERROR_BACKOFF_MS,
    });
  }

  get inFlightCount(): number {
    return this.inFlight.size;
  }

  async start(): Promise<void> {
    if (this.running) return;
    this.running = true;
    this.stopping = false;
    this.agents = pinnedAgents({ keepAlive: true });
    this.unsubscribe = this.o.coordination.onWake('outbox', () => this.notify());
    this.loop.start();
  }

  /** Outbox entries were written: look now rather than at the next planned wake-up. */
  notify(): void {
    this.kick();
  }

  async stop(): Promise<void> {
    if (!this.running) return;
    this.stopping = true;
    this.unsubscribe?.();
    await this.loop.stop();
    if (this.inFlight.size > 0 && !(await settledWithin(this.allDone(), this.graceMs))) {
      this.logger.warn({ inFlight: this.inFlight.size }, 'webhook grace period over: aborting requests, they are sent again after the restart');
      for (const f of this.inFlight.values()) f.abort.abort();
      await this.allDone();
    }
    this.agents?.http.destroy();
    this.agents?.https.destroy();
    this.running = false;
  }

  private allDone(): Promise<unknown> {
    return Promise.allSettled([...this.inFlight.values()].map((f) => f.done));
  }

  private kick(): void {
    if (!this.running || this.stopping) return;
    this.loop.kick();
  }

  /** One round: claim what may be sent now; resolves with when to look again at the latest. */
  private async fill(): Promise<number> {
    const room = this.maxInFlight - this.inFlight.size;
    if (room <= 0) return this.clock.now() + this.idleCheckMs; // a finishing request kicks again
    const now = this.clock.now();
    // The store skips what is claimed already (in flight here); each webhook's free slots go as data.
    const byWebhook: Record<string, number> = {};
    for (const [id, n] of this.perWebhook) byWebhook[id] = this.settings.concurrency - n;
    const { claims, nextDueMs } = await this.store.webhookOutbox.claimDue({
      nowMs: now,
      max: room,
      freeSlots: { default: this.settings.concurrency, byWebhook },
    });
    // Claimed while stopping: given back unsent, due again for whoever claims next.
    if (this.stopping) await this.store.webhookOutbox.release(claims.map((c) => c.entry));
    else for (const c of claims) this.launch(c);
    return nextDueMs ?? now + this.idleCheckMs;
  }

  private launch(c: Claim): void {
    const key = c.entry.id;
    const abort = new AbortController();
    const id = c.webhook.id;
    this.perWebhook.set(id, (this.perWebhook.get(id) ?? 0) + 1);
    const done = this.attempt(c, abort.signal)
      .catch((err) => this.logger.error({ err, webhookId: id }, 'webhook attempt could not be recorded'))
      .finally(() => {
        this.inFlight.delete(key);
        const n = (this.perWebhook.get(id) ?? 1) - 1;
        if (n <= 0) this.perWebhook.delete(id);
        else this.perWebhook.set(id, n);
        this.kick();
      });
    this.inFlight.set(key, { webhookId: id, abort, done });
  }

  private async attempt(c: Claim, signal: AbortSignal): Promise<void> {
    const { webhook, entry } = c;
    const result = await this.send(c, signal).catch(async (err: unknown) => {
      await this.store.webhookOutbox.release([entry]); // not sent: due again at the next round
      throw err;
    });
    if (signal.aborted) return this.store.webhookOutbox.release([entry]); // stays in the outbox: sent again after the restart
    const now = this.clock.now();
    const deadline = entry.createdAtMs + this.settings.maxAgeMs;
    const retryAtMs = result.error === null || now >= deadline ? undefined : Math.min(now + retryDelayMs(entry.attempts + 1, this.settings.retryBaseMs), deadline);
    const outcome = await this.store.webhookOutbox.recordAttempt({ entry, atMs: now, statusCode: result.statusCode, error: result.error, retryAtMs });
    const log = { webhookId: webhook.id, messageId: entry.messageId, eventType: entry.payload.eventType, attempt: entry.attempts + 1, statusCode: result.statusCode };
    if (outcome === 'retry') this.logger.info({ ...log, error: result.error, retryAt: new Date(retryAtMs!).toISOString() }, 'webhook attempt failed, will retry');
    else if (outcome === 'dropped') this.logger.warn({ ...log, error: result.error }, 'webhook delivery given up');
    else this.logger.debug(log, 'webhook delivered');
  }

  private send(c: Claim, signal: AbortSignal): Promise<PostResult> {
    const { webhook, secret, entry } = c;
    return sendSigned(
      { webhook, secret, payload: entry.payload, deliveryId: entry.id, attempt: entry.attempts + 1 },
      { targets: this.o.targets, post: this.post, timeoutMs: this.settings.timeoutMs, maxResponseBytes: this.maxResponseBytes, nowMs: this.clock.wall(), agents: this.agents, signal },
    );
  }
}
