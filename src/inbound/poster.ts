/**
 * InboundPoster: the background stage that processes received messages after their 250.
 *
 *   claim due messages (under a lease) → verify, build the JSON (worker pool), signed POST (post-attempt.ts)
 *   → record the attempt (posted, retry at, failed) → claim again
 *
 * Restart-safe because the store holds the work: a message is due from its commit on until an
 * attempt ends it, and a claim is a lease that names this node, so a message claimed by a
 * process that crashed (or was stopped in the middle) is given back by the node's next start and
 * posted at once (another node's claim is due again once its lease runs out). It
 * wakes when the listener committed a message (notify), when an attempt ends, at the next due
 * time, and at least every idleCheckMs (messages committed by another node). stop() waits for
 * attempts in flight up to shutdown.graceMs, then aborts them (they are posted again at the next start).
 */
import type { Config } from '../config/schema.js';
import { settledWithin } from '../domain/settle.js';
import type { Logger } from '../log/logger.js';
import { systemClock, type Clock } from '../queue/clock.js';
import { WorkLoop } from '../queue/work-loop.js';
import type { StorePort } from '../store/port/index.js';
import type { InboundClaim } from '../store/port/inbound-messages.js';
import { postWebhook, type PostFn } from '../webhooks/http-post.js';
import { pinnedAgents, type PinnedAgents } from '../webhooks/pinned-agent.js';
import { RESPONSE_BYTES } from '../webhooks/request.js';
import type { WebhookTargets } from '../webhooks/targets.js';
import type { WorkerPool } from '../workers/pool.js';
import type { AuthDns } from './auth-resolver.js';
import { runAttempt, type PostAttemptDeps } from './post-attempt.js';
import { loadVerifier } from './verify.js';

/** The configuration the poster reads: its own limits, the webhooks' backoff and timeout, the drain's grace. */
export type InboundPosterSettings = Pick<Config, 'inbound'> & { webhooks: Pick<Config['webhooks'], 'retryBaseMs' | 'timeoutMs'>; shutdown: Pick<Config['shutdown'], 'graceMs'> };

export interface InboundPosterOptions {
  store: Pick<StorePort, 'inboundMessages' | 'inboundRoutes'>;
  config: InboundPosterSettings;
  /** This node's id (the same across its restarts): its claims' owner, whose start gives back what its previous process held. */
  nodeId: string;
  targets: WebhookTargets;
  resolver: AuthDns;
  /** The link an attachment too large to inline gets (the authenticated download of the message's attachment) is this followed by its index. */
  attachmentUrlPrefix: (messageId: string) => string;
  /** The worker pool, where each message's JSON is built (post-attempt.ts). */
  pool: Pick<WorkerPool, 'inboundPayload'>;
  logger: Logger;
  clock?: Clock;
  post?: PostFn;
  /** How long a claim holds a message: longer than verification, parsing and one POST together. Default 5 min. */
  leaseMs?: number;
  /** Longest sleep while idle. Default 30 s. */
  idleCheckMs?: number;
  /**
   * Cluster mode: the nodes that stopped beating (Coordination.nodesGone), looked for every
   * `everyMs`: their claims are given back at once, as delivery takes back their leases, so a
   * dead node's messages are posted by the others without waiting out the claims' lease.
   */
  goneNodes?: { list: () => Promise<string[]>; everyMs: number };
}

const ERROR_BACKOFF_MS = 5_000;
/**
 * Raw bytes of the messages in flight at most, past the first: each holds its raw bytes, its
 * parse and its JSON (about three times its size) until its POST ends, so 32 messages of 36 MiB
 * would take gigabytes. Claims are sized so that even messages of inbound.maxMessageSize stay
 * within it; one message is always taken, whatever its size.
 */
const BYTES_IN_FLIGHT = 256 * 1024 * 1024;
/** Attempts already in flight up to which the poster counts as trickling (post-attempt.ts buildHere). */
const TRICKLE = 1;

export class InboundPoster {
  private readonly inFlight = new Map<string, { abort: AbortController; done: Promise<void> }>();
  private bytesInFlight = 0;
  private readonly loop: WorkLoop;
  private readonly clock: Clock;
  private agents: PinnedAgents | undefined;
  private running = false;
  private stopping = false;
  /** Set by start: the first round gives back the claims this node held before (none of them is in flight here). */
  private releasePending = false;
  /** When the gone nodes were last looked for (goneNodes); -Infinity: at the first round. */
  private lastGoneCheckMs = Number.NEGATIVE_INFINITY;

  constructor(private readonly o: InboundPosterOptions) {
    this.clock = o.clock ?? systemClock();
    this.loop = new WorkLoop({
      clock: this.clock,
      round: () => this.fill(),
      onError: (err) => this.o.logger.error({ err }, 'inbound poster could not read the received messages'),
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
    this.releasePending = true;
    this.agents = pinnedAgents({ keepAlive: true });
    // Loaded now rather than in the middle of the first message's attempt (verify.ts); a failed
    // import is met again, and reported as the message's verdict, when a message is verified.
    loadVerifier().catch(() => undefined);
    this.loop.start();
  }

  /** A message was committed: look now rather than at the next planned wake-up. */
  notify(): void {
    if (this.running && !this.stopping) this.loop.kick();
  }

  async stop(): Promise<void> {
    if (!this.running) return;
    this.stopping = true;
    await this.loop.stop();
    const all = () => Promise.allSettled([...this.inFlight.values()].map((f) => f.done));
    if (this.inFlight.size > 0 && !(await settledWithin(all(), this.o.config.shutdown.graceMs))) {
      this.o.logger.warn({ inFlight: this.inFlight.size }, 'inbound grace period over: aborting POSTs, they are posted again at the next start');
      for (const f of this.inFlight.values()) f.abort.abort();
      await all();
    }
    this.agents?.http.destroy();
    this.agents?.https.destroy();
    this.running = false;
  }

  /**
   * One round: claim what is due, as much as there is room for (inbound.concurrency, and the
   * bytes in flight), again while whole claims come back; resolves with when to look again at the
   * latest (an attempt that ends kicks again).
   */
  private async fill(): Promise<number> {
    const now = this.clock.now();
    if (this.releasePending) await this.releaseOwnClaims(now);
    const gone = this.o.goneNodes;
    if (gone && now - this.lastGoneCheckMs >= gone.everyMs) await this.releaseGoneClaims(now, gone.list);
    const idle = Math.min(now + (this.o.idleCheckMs ?? 30_000), gone ? this.lastGoneCheckMs + gone.everyMs : Infinity);
    let next = idle;
    for (let max = this.room(); max > 0 && !this.stopping; max = this.room()) {
      const { claims, nextDueMs } = await this.o.store.inboundMessages.claimDue({ owner: this.o.nodeId, nowMs: now, max, leaseMs: this.o.leaseMs ?? 300_000 });
      for (const c of claims) this.launch(c);
      next = Math.min(idle, nextDueMs ?? idle);
      if (claims.length < max) break;
    }
    return next;
  }

  /**
   * The claims this node's previous process left (killed, or stopped mid-POST: stop() waits for
   * or aborts every attempt, so none is in flight here) are due now rather than at their lease's
   * end. A store error leaves it pending: the round is tried again after the loop's back-off.
   */
  private async releaseOwnClaims(now: number): Promise<void> {
    await this.releaseClaimsOf(this.o.nodeId, now, { fields: {}, message: 'inbound claims of a previous run given back: posted again now' });
    this.releasePending = false;
  }

  /** The claims of nodes that stopped beating: due now, their lease numbers raised (a late write of theirs is stale). */
  private async releaseGoneClaims(now: number, list: () => Promise<string[]>): Promise<void> {
    this.lastGoneCheckMs = now;
    for (const node of await list()) {
      await this.releaseClaimsOf(node, now, { fields: { node }, message: 'inbound claims of a node that stopped beating given back: posted again now' });
    }
  }

  /** Gives back `owner`'s claims (due at `now`) and, when there were any, logs `log.message` with its fields and how many. */
  private async releaseClaimsOf(owner: string, now: number, log: { fields: { node?: string }; message: string }): Promise<void> {
    const released = await this.o.store.inboundMessages.releaseClaims({ owner, nowMs: now });
    if (released > 0) this.o.logger.warn({ ...log.fields, released }, log.message);
  }

  /** How many messages one claim may take: free places, and as many of the largest size as the byte budget has room for. */
  private room(): number {
    const places = this.o.config.inbound.concurrency - this.inFlight.size;
    const byBytes = Math.floor((BYTES_IN_FLIGHT - this.bytesInFlight) / this.o.config.inbound.maxMessageSize);
    return Math.min(places, this.inFlight.size === 0 ? Math.max(1, byBytes) : byBytes);
  }

  private launch(c: InboundClaim): void {
    const abort = new AbortController();
    const log = this.o.logger.child({ inboundMessageId: c.message.id, routeId: c.message.routeId, attempt: c.message.attempts.length + 1 });
    const done = runAttempt(c, this.deps(), abort.signal)
      .then((r) => {
        if (r === 'stale') return log.debug('inbound attempt ended without a record (claimed again, or stopped)');
        const fields = { statusCode: r.attempt.statusCode, error: r.attempt.error };
        if (r.end.kind === 'posted') log.info(fields, 'inbound message posted');
        else if (r.end.kind === 'retry') log.info({ ...fields, retryAt: new Date(r.end.atMs).toISOString() }, 'inbound post failed, will retry');
        else log.warn(fields, 'inbound message failed');
      })
      .catch((err: unknown) => log.error({ err }, 'inbound attempt could not be recorded; retried after the lease'))
      .finally(() => {
        this.inFlight.delete(c.message.id);
        this.bytesInFlight -= c.message.size;
        this.notify();
      });
    this.inFlight.set(c.message.id, { abort, done });
    this.bytesInFlight += c.message.size;
  }

  private deps(): PostAttemptDeps {
    const { config } = this.o;
    return {
      store: this.o.store,
      resolver: this.o.resolver,
      send: { targets: this.o.targets, post: this.o.post ?? postWebhook, timeoutMs: config.webhooks.timeoutMs, maxResponseBytes: RESPONSE_BYTES, agents: this.agents },
      retryBaseMs: config.webhooks.retryBaseMs,
      postMaxAgeMs: config.inbound.postMaxAgeMs,
      attachmentInlineMax: config.inbound.attachmentInlineMax,
      attachmentUrlPrefix: this.o.attachmentUrlPrefix,
      pool: this.o.pool,
      // A trickle (this one and at most one other in flight): small messages are built on this thread (post-attempt.ts).
      buildHere: this.inFlight.size <= TRICKLE,
      now: () => this.clock.now(),
      wall: () => this.clock.wall(),
    };
  }
}
