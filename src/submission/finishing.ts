/**
 * The finishing stage: MIME composition and DKIM signatures (RFC 6376) are made after the commit,
 * not before the 200 or the 250. enqueue() hands it the ids of the messages it committed
 * unfinished: an API send or a broadcast's entry as its normalized request (transactional.ts,
 * broadcast-entry.ts), an SMTP submission as the raw message to sign (raw.ts). It reads what was committed, composes (when there is a request)
 * and signs (with the domain's key of that moment) in the worker pool, several messages per pool
 * task, and stores the finished body, which makes the message's jobs due (the store's storeFinished). At
 * start it finishes what a stop or a crash left, from what was committed: composing is
 * deterministic given the request (Message-ID, Date and multipart boundaries are fixed at intake),
 * so the body is the same whichever run makes it (the signature's own timestamp aside).
 *
 * The key is looked up when signing, not at intake: a key rotated in between is the one whose
 * DNS record receivers will find when the message arrives, while the replaced one may already
 * be unpublished (domains keep only the active and the pending key). The worst case is a
 * message committed just before a rotation and signed just after it: it carries the new key,
 * which is what the domain publishes now.
 *
 * Why a try failed and what comes next (a retry, or the message ends) is finishing-failures.ts.
 *
 * The store's backlog (what a stop or a crash left, what overflowed memory, a broadcast's
 * messages) is walked only under the node's 'finishing' lease (coordination/port.ts, Backlog),
 * taken at start and renewed by a timer until stop(); while another holder owns it, the walk
 * waits and the timer tries again. The messages scheduled as they are committed (the send that
 * just got its 200) are finished at once either way: they are this process's own. On one node
 * (LocalCoordination) the lease is always granted.
 *
 * What a cluster needs beyond this (not built: LMDB serves one node): each unfinished entry
 * records the node whose stage committed it, and unfinishedAfter/unfinishedCount read one node's
 * entries, so that a stage walks its own node's backlog under its own lease and a node takes over
 * another's (own('finishing', thatNode)) only once that node's lease lapsed; and storeFinished
 * and endUnfinished act only on an entry still waiting (they end its wait once), so two stages
 * finishing one message in the takeover's window store one body and no second bounce.
 */
import type { Logger } from 'pino';
import { LocalCoordination } from '../coordination/local.js';
import type { Coordination, Lease } from '../coordination/port.js';
import { definedOnly } from '../domain/defined.js';
import { oncePerWindow } from '../log/repeats.js';
import { systemClock, type Clock, type Timer } from '../queue/clock.js';
import type { StorePort } from '../store/port/index.js';
import type { FinishedMessage, UnfinishedFailure } from '../store/port/messages.js';
import { classify, ComposedTooLarge, countFailure, failureCode, keptTries, unfinishedFailure, waitAfter, type Failures, type RetryPolicy } from './finishing-failures.js';
import type { BuildRequest, DkimKeyRef, DomainRegistry, FinishRequest, MessageBuilder } from './ports.js';

/** At most one warning per this many ms while the store cannot be reached. */
const UNREACHABLE_LOG_MS = 10_000;

/**
 * The request as committed: the engagement input without its HMAC key, which stays in the
 * store's meta (secrets.ts) and is added back when composing. A broadcast's message also keeps
 * its entry's index: a composition that fails for good becomes that entry's failure row.
 */
export type CommittedRequest = Omit<BuildRequest, 'engagement'> & {
  engagement?: Omit<NonNullable<BuildRequest['engagement']>, 'secret'>;
  broadcastEntry?: number;
};

/** What transactional.ts commits for a request (the tracking secret left out). */
export function forStorage(req: BuildRequest): CommittedRequest {
  if (!req.engagement) return req;
  const { secret: _secret, ...engagement } = req.engagement;
  return { ...req, engagement };
}

export interface FinishingStageOptions {
  store: StorePort;
  /** The worker pool's finish task (builder.ts), which reports each signature's time to the metrics. */
  builder: Pick<MessageBuilder, 'finish'>;
  domains: Pick<DomainRegistry, 'signingKey'>;
  logger: Logger;
  /** Told when finished messages' jobs became due (the dispatcher looks at the queue). */
  onReady?: () => void;
  /** Pool tasks at once: enough to keep its threads busy, few enough that stop() is quick. */
  concurrency?: number;
  /** Messages per pool task at most: one hop to a thread costs about as much as composing a small message. */
  batch?: number;
  /**
   * Wait before a message that failed for an unknown reason (the pool died, a fault not marked
   * as the input's) is tried again; doubled on each failure up to maxRetryMs.
   */
  retryMs?: number;
  maxRetryMs?: number;
  /** Wait between the tries of a message whose failure comes back for its input (finishing-failures.ts classify). */
  confirmMs?: number;
  /** The message ends (bounced) after failing this many times in a row the same way for its input. */
  confirmTries?: number;
  /** smtp.maxMessageSize: a composed message larger than this ends as bounced (message_too_large). */
  maxMessageSize?: number;
  /** At most this long, stop() finishes what waits. */
  drainMs?: number;
  /**
   * Messages scheduled and not yet in the pool kept in memory at most; beyond it they are left
   * to the store, read back a page at a time (pageSize) once the stage has time for them.
   */
  maxWaiting?: number;
  pageSize?: number;
  /** Ownership of this node's backlog. Default: a LocalCoordination of its own (node 'local', on `clock`). */
  coordination?: Pick<Coordination, 'nodeId' | 'own'>;
  /** The backlog's lease lasts this long; it is renewed (or asked for again) every third of it. */
  leaseMs?: number;
  /** Time of the lease's timer (fake in tests). */
  clock?: Clock;
}

/** One message of a pool task. */
interface Job {
  messageId: string;
  request: FinishRequest;
  composed: boolean;
}

/** The DKIM keys one pool task's messages read, by account and domain (FinishingStage.signingKey). */
type BatchKeys = Map<string, Promise<DkimKeyRef | undefined>>;

/**
 * Where the walk of the store's waiting entries is (pendingSignaturesAfter): the last key read
 * (undefined: from the first); `again`: entries were left to the store behind the cursor (the
 * in-memory lane was full), so the walk starts over once it reaches the end.
 */
interface Scan {
  after: string | undefined;
  again: boolean;
}

export class FinishingStage {
  /**
   * Two lanes. `waiting`: messages scheduled as they are committed (transactional sends: the
   * latency-sensitive ones), taken first and bounded by maxWaiting. `paged`: a page of the
   * store's backlog (what the last run left, what overflowed `waiting`), taken when `waiting`
   * has fewer than a pool task's batch, so a large backlog neither sits in memory nor holds up
   * new sends.
   */
  private readonly waiting = new Set<string>();
  private paged: string[] = [];
  private scan: Scan | null = null;
  /** Messages whose retry is timed (retryLater): the walk leaves them to their timer. */
  private readonly delayed = new Set<string>();
  private readonly maxWaiting: number;
  private readonly pageSize: number;
  /**
   * Failed tries per message since its last success: the backoffs, the count that ends a message,
   * logging once. Also written to the message's store entry at each failure, and read back from
   * it when this run first takes the message (jobOf), so the count survives a restart.
   */
  private readonly tries = new Map<string, Failures>();
  /** Messages in a pool task or being stored now. */
  private readonly running = new Set<string>();
  private readonly tasks = new Set<Promise<void>>();
  private readonly concurrency: number;
  private readonly batch: number;
  /** The waits between tries (finishing-failures.ts waitAfter). */
  private readonly policy: RetryPolicy;
  private readonly confirmTries: number;
  private readonly retryTimers = new Set<NodeJS.Timeout>();
  /** The warning of an unreachable store, at most once per UNREACHABLE_LOG_MS (log/repeats.ts). */
  private readonly unreachable = oncePerWindow(UNREACHABLE_LOG_MS);
  private started = false;
  /** stop() is finishing what waits: failures are no longer retried. */
  private stopping = false;
  private readonly drainMs: number;
  /** Finished bodies waiting for the next write: the tasks that finish together share one. */
  private finished: FinishedMessage[] = [];
  private write: Promise<void> | null = null;
  /** A page of the store's backlog is being read (refill). */
  private reading = false;
  private readonly coordination: Pick<Coordination, 'nodeId' | 'own'>;
  private readonly clock: Clock;
  private readonly leaseMs: number;
  /** The node's 'finishing' lease: the store's backlog is walked only while it is held. */
  private lease: Lease | null = null;
  private leaseTimer: Timer | null = null;

  constructor(private readonly o: FinishingStageOptions) {
    this.concurrency = o.concurrency ?? 4;
    this.batch = o.batch ?? 32;
    const retryMs = o.retryMs ?? 5_000;
    this.policy = { retryMs, maxRetryMs: Math.max(retryMs, o.maxRetryMs ?? 5 * 60_000), confirmMs: o.confirmMs ?? 2_000 };
    this.confirmTries = o.confirmTries ?? 3;
    this.drainMs = o.drainMs ?? 5_000;
    this.maxWaiting = o.maxWaiting ?? 4_096;
    this.pageSize = o.pageSize ?? 512;
    this.clock = o.clock ?? systemClock();
    this.coordination = o.coordination ?? new LocalCoordination({ nodeId: 'local', clock: this.clock });
    this.leaseMs = o.leaseMs ?? 60_000;
  }

  /** Picks up every message left unfinished by the last run, once the node's backlog is ours. */
  async start(): Promise<void> {
    this.started = true;
    const left = await this.o.store.messages.unfinishedCount();
    if (left > 0) this.o.logger.info({ messages: left }, 'finishing messages committed before the last stop');
    await this.keepBacklog();
    this.pump();
  }

  /**
   * Renews the backlog's lease, or asks for it when not held; granted, the walk starts from the
   * first entry (what was left to the store meanwhile waits there). Lost, the walk stops at once.
   * Then plans the next turn, a third of the lease later, so a renewal comes before it lapses.
   */
  private async keepBacklog(): Promise<void> {
    this.leaseTimer = null;
    try {
      if (this.lease && !(await this.lease.renew())) {
        this.lease = null;
        this.scan = null;
        this.paged = [];
        this.o.logger.warn({ node: this.coordination.nodeId }, 'the lease of the messages waiting to be finished was lost; their walk stops');
      }
      if (!this.lease) await this.takeBacklog();
    } catch (err) {
      this.o.logger.error({ err }, 'renewing the lease of the messages waiting to be finished failed; tried again');
    }
    if (!this.started || this.stopping) return;
    this.leaseTimer = this.clock.setTimer(() => void this.keepBacklog(), Math.max(1, Math.floor(this.leaseMs / 3)));
  }

  private async takeBacklog(): Promise<void> {
    const lease = await this.coordination.own('finishing', this.coordination.nodeId, this.leaseMs);
    if (lease && (!this.started || this.stopping)) return lease.release(); // stopped meanwhile
    this.lease = lease;
    if (!lease) return;
    this.scan = { after: undefined, again: false };
    this.pump();
  }

  /**
   * Finishes what waits, then stops: after a graceful stop (SIGTERM) every acknowledged message
   * has its body, as when composition came before the 200. Bounded by drainMs; what is left then
   * (and what fails meanwhile) is finished at the next start.
   */
  async stop(): Promise<void> {
    this.leaseTimer?.cancel();
    this.leaseTimer = null;
    for (const t of this.retryTimers) clearTimeout(t);
    this.retryTimers.clear();
    this.stopping = true;
    // Monotonic: a step of the wall clock must neither cut the drain short nor stretch it by the step.
    const deadline = performance.now() + this.drainMs;
    while (this.started && this.tasks.size > 0 && performance.now() < deadline) {
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<void>((resolve) => (timer = setTimeout(resolve, deadline - performance.now())));
      await Promise.race([Promise.race(this.tasks), late]);
      clearTimeout(timer);
    }
    this.started = false;
    this.stopping = false;
    this.waiting.clear();
    this.paged = [];
    this.scan = null;
    this.delayed.clear();
    this.tries.clear();
    await Promise.allSettled(this.tasks);
    // After the drain, whose tasks were the lease's; the next holder starts from the store.
    await this.lease?.release();
    this.lease = null;
  }

  /**
   * Messages committed unfinished a moment ago; ids already waiting or in the pool are not taken
   * twice. background (a broadcast's expansion): not held in memory, read back from the store
   * when no scheduled message waits, so a send is finished before a broadcast's backlog.
   */
  schedule(messageIds: readonly string[], o: { background?: boolean } = {}): void {
    if (!this.started || this.stopping) return; // start() finds them in the store
    if (o.background) {
      if (messageIds.length > 0) this.leftToStore();
      return this.pump();
    }
    for (const id of messageIds) {
      if (this.running.has(id) || this.waiting.has(id)) continue;
      if (this.waiting.size < this.maxWaiting) this.waiting.add(id);
      else this.leftToStore();
    }
    this.pump();
  }

  /**
   * Its entry is committed: the walk of the store finds it (from the first key if the walk is past
   * it), once the backlog's lease is ours (a walk starts from the first key when it is granted).
   */
  private leftToStore(): void {
    if (!this.lease) return;
    if (this.scan) this.scan.again = true;
    else this.scan = { after: undefined, again: false };
  }

  /**
   * Messages waiting to be finished or being finished now (tests, metrics): while the store's
   * backlog is walked, its entries (which include those held here: an entry goes when its body
   * is stored) are counted.
   */
  async backlog(): Promise<number> {
    if (!this.scan && this.paged.length === 0) return this.held;
    return Math.max(this.held, await this.o.store.messages.unfinishedCount());
  }

  /** Message ids held in memory: the scheduled lane, the page of the store's backlog, the running (bounded; tests). */
  get held(): number {
    return this.waiting.size + this.paged.length + this.running.size;
  }

  /** Hands waiting messages to the pool, up to `batch` per task: under load they gather while the tasks run. */
  private pump(): void {
    while (this.started && this.tasks.size < this.concurrency) {
      const ids = this.take();
      if (ids.length === 0) return;
      const task: Promise<void> = this.finishAll(ids)
        .catch((err: unknown) => {
          for (const id of ids) this.failed(id, err);
        })
        .finally(() => {
          for (const id of ids) this.running.delete(id);
          this.tasks.delete(task);
          if (this.started) this.pump();
        });
      this.tasks.add(task);
    }
  }

  /**
   * Up to `batch` messages for one pool task, marked running: the scheduled ones first, then the
   * store's backlog. None while the next page of the backlog is needed and not read yet: the read
   * (refill) pumps again once the page is in, so a task is filled as if the page had been there.
   */
  private take(): string[] {
    if (this.waiting.size < this.batch && this.paged.length === 0 && this.scan) {
      this.refill();
      return [];
    }
    const ids: string[] = [];
    for (const id of this.waiting) {
      if (ids.length >= this.batch) break;
      ids.push(id);
    }
    for (const id of ids) this.waiting.delete(id);
    while (ids.length < this.batch && this.paged.length > 0) {
      const id = this.paged.shift()!;
      // Scheduled (or started) meanwhile: it is taken from there.
      if (!this.running.has(id) && !this.waiting.has(id) && !ids.includes(id)) ids.push(id);
    }
    for (const id of ids) this.running.add(id);
    return ids;
  }

  /** Reads the next page of the backlog (one read at a time), then hands what waits to the pool. */
  private refill(): void {
    if (this.reading) return;
    this.reading = true;
    this.nextPage().then(
      () => {
        this.reading = false;
        this.pump();
      },
      (err: unknown) => {
        // The walk stops; the entries stay in the store, read at the next schedule or start.
        this.reading = false;
        this.scan = null;
        this.o.logger.error({ err }, 'reading the messages waiting to be finished failed');
        this.pump();
      },
    );
  }

  /** Reads the next page of the store's waiting entries into `paged`; false when the walk is over. */
  private async nextPage(): Promise<boolean> {
    while (this.scan) {
      const scan = this.scan;
      const page = await this.o.store.messages.unfinishedAfter(scan.after, this.pageSize);
      // A stop (or a walk started over) meanwhile: this page is not the walk's any more.
      if (this.scan !== scan) continue;
      if (page.length === 0) {
        this.scan = this.scan.again ? { after: undefined, again: false } : null;
        if (this.scan) continue;
        return false;
      }
      this.scan.after = page[page.length - 1];
      // What a timer will retry, or a task holds, is not taken twice.
      this.paged = page.filter((id) => !this.delayed.has(id) && !this.running.has(id) && !this.waiting.has(id));
      if (this.paged.length > 0) return true;
    }
    return false;
  }

  /** Finishes the messages in one pool task and stores them in one write; each failure is retried on its own. */
  private async finishAll(ids: readonly string[]): Promise<void> {
    const done: FinishedMessage[] = [];
    const jobs: Job[] = [];
    const keys: BatchKeys = new Map();
    for (const id of ids) {
      const job = await this.jobOf(id, done, keys);
      if (job) jobs.push(job);
    }
    const settled = jobs.length > 0 ? await this.o.builder.finish(jobs.map((j) => j.request)) : [];
    settled.forEach((s, i) => {
      const { messageId, composed } = jobs[i]!;
      if (s.status === 'rejected') return this.failed(messageId, s.reason);
      const { raw, html, text, size } = s.value;
      const max = this.o.maxMessageSize;
      if (composed && max !== undefined && size !== undefined && size > max) {
        return this.failed(messageId, new ComposedTooLarge(`the composed message is ${size} bytes; at most ${max} are accepted`));
      }
      done.push({ messageId, body: raw, composed, record: composed ? definedOnly({ html, text, size }) : undefined });
    });
    if (done.length === 0) return;
    try {
      await this.store(done);
      for (const d of done) this.tries.delete(d.messageId);
    } catch (err) {
      for (const d of done) this.failed(d.messageId, err);
    }
  }

  /** The pool's work for one committed message; what needs none goes straight to `done`. */
  private async jobOf(messageId: string, done: FinishedMessage[], keys: BatchKeys): Promise<Job | undefined> {
    const pending = await this.o.store.messages.unfinished(messageId);
    if (!pending) return undefined;
    // Failures counted by an earlier run (or before stop()): counting goes on from them.
    if (pending.failures && !this.tries.has(messageId)) this.tries.set(messageId, { ...pending.failures });
    // The message went before it was finished: storing "nothing" only ends its wait.
    if (pending.gone) return void done.push({ messageId, body: new Uint8Array(0) });
    const key = pending.domain ? await this.signingKey(keys, pending.accountId, pending.domain) : undefined;
    if (pending.domain && !key) this.o.logger.warn({ messageId, domain: pending.domain }, 'the domain has no DKIM key any more: message sent unsigned');
    const compose = pending.compose as CommittedRequest | undefined;
    if (!compose) {
      if (!key) return void done.push({ messageId, body: pending.body! });
      return { messageId, request: { raw: pending.body!, dkim: key }, composed: false };
    }
    return { messageId, request: { build: await this.withSecret(compose), dkim: key }, composed: true };
  }

  /**
   * The domain's DKIM key, read once per batch: a batch's messages come from few domains, and
   * each read decodes the domain's record with its private key (about 2 KB per message on the
   * main thread; bench/alloc.mjs).
   */
  private signingKey(keys: BatchKeys, accountId: string, domainName: string): Promise<DkimKeyRef | undefined> {
    const id = `${accountId}\u0000${domainName}`;
    let key = keys.get(id);
    if (!key) keys.set(id, (key = this.o.domains.signingKey({ accountId, domainName })));
    return key;
  }

  /** What the worker composes from: the committed request with the tracking secret, without what only the stage reads. */
  private async withSecret(committed: CommittedRequest): Promise<BuildRequest> {
    const { broadcastEntry: _entry, ...req } = committed;
    if (!req.engagement) return req as BuildRequest;
    return { ...req, engagement: { ...req.engagement, secret: (await this.o.store.meta.trackingSecret()).toString('hex') } };
  }

  /** Resolves when the bodies are stored, in one write with the others finished by then. */
  private store(items: readonly FinishedMessage[]): Promise<void> {
    this.finished.push(...items);
    this.write ??= new Promise<void>((resolve) => setImmediate(resolve)).then(async () => {
      const batch = this.finished;
      this.finished = [];
      this.write = null;
      if ((await this.o.store.messages.storeFinished(batch)) > 0) this.o.onReady?.();
    });
    return this.write;
  }

  /** The entry stays in the store: tried again later, or at the next start if we are stopping; or the message ends (classify). */
  private failed(messageId: string, err: unknown): void {
    if (!this.started || this.stopping) return;
    const kind = classify(err);
    const reason = err instanceof Error ? err.message : String(err);
    const f = countFailure(this.tries.get(messageId) ?? { tries: 0, same: 0 }, kind, reason, err);
    this.tries.set(messageId, f);
    if (kind === 'input' && f.same >= this.confirmTries) return void this.end(messageId, err, reason);
    // Not for a full or unreachable store, which would refuse this write too (and whose failure says nothing of the input).
    if (kind !== 'full' && kind !== 'unavailable') this.keep(messageId, f);
    if (kind === 'full' && f.tries === 1) this.o.logger.warn({ messageId }, 'storage full while storing a finished message; retrying until space returns');
    // One line for all the messages of an outage, not one per message (a backlog of thousands).
    if (kind === 'unavailable') this.unreachable((leftOut) => this.o.logger.warn({ err, leftOut: leftOut || undefined }, 'the store cannot be reached; messages waiting to be composed or signed are tried again until it answers'));
    // Once per message, not per try: a pool that stays down would otherwise log every few seconds per message.
    if (kind === 'other' && !f.logged) {
      f.logged = true;
      this.o.logger.error({ err, messageId }, 'composing or DKIM signing after the commit failed; the message waits and is tried again (logged once)');
    }
    this.retryLater(messageId, waitAfter(this.policy, kind, f.tries));
  }

  /** Writes the count to the message's entry; if that fails, the count in memory still serves this run. */
  private keep(messageId: string, f: Failures): void {
    this.o.store.messages.recordFinishingTries(messageId, keptTries(f)).catch((err: unknown) => {
      this.o.logger.warn({ err, messageId }, 'keeping the count of failed tries of a message to be finished failed');
    });
  }

  private retryLater(messageId: string, wait: number): void {
    this.delayed.add(messageId);
    const timer = setTimeout(() => {
      this.retryTimers.delete(timer);
      this.delayed.delete(messageId);
      this.schedule([messageId]);
    }, wait);
    timer.unref();
    this.retryTimers.add(timer);
  }

  /**
   * The message cannot be composed: it ends with a permanent bounced event per recipient that
   * says why (the store's endUnfinished), instead of waiting for ever unseen. Ending it may
   * fail in turn (a full store): it is then tried again, fails the same way and ends then.
   */
  private end(messageId: string, err: unknown, reason: string): void {
    const failure = unfinishedFailure(err, reason);
    this.endIn(messageId, failure, { code: failureCode(err), message: reason }).then(
      (bounced) => {
        this.tries.delete(messageId);
        if (bounced.length > 0) this.o.logger.warn({ messageId, reason, recipients: bounced.length }, 'the message cannot be composed; it ends as bounced');
      },
      (e: unknown) => {
        this.o.logger.warn({ err: e, messageId }, 'ending a message that cannot be composed failed; tried again');
        if (this.started && !this.stopping) this.retryLater(messageId, waitAfter(this.policy, classify(e), this.tries.get(messageId)?.tries ?? 1));
      },
    );
  }
  /** Ends the message in one verb; a broadcast's entry becomes its failure row in the same write, as one that failed before the commit. */
  private async endIn(messageId: string, failure: UnfinishedFailure, row: { code: string; message: string }): Promise<string[]> {
    const index = ((await this.o.store.messages.unfinished(messageId))?.compose as CommittedRequest | undefined)?.broadcastEntry;
    const failedEntry = index === undefined ? undefined : { index, ...row };
    return this.o.store.messages.endUnfinished({ messageId, failure, failedEntry });
  }

}
