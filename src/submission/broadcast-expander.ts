/**
 * Turns accepted broadcasts into messages, a batch at a time: suppressed entries are skipped, the
 * rest are committed as their normalized requests (broadcast-entry.ts) together with the
 * broadcast's cursor, and the finishing stage (finishing.ts) renders, composes and signs them after
 * the commit, in its background lane, behind the transactional sends. So the expansion is
 * main-thread work only and is not bound by the worker pool. One broadcast at a time, oldest
 * first. An entry that cannot be prepared (its subject does not render with its data) becomes a
 * failure row at once, one whose composition fails for good after the commit becomes one then
 * (store/broadcasts.ts); an expansion that fails as a whole (store error, full disk, signing key
 * unreadable) is retried by a timer with backoff, so a broadcast never waits for a restart or for
 * the next broadcast.
 *
 * The backlog of broadcasts is shared through the coordination port (coordination/port.ts): an
 * accepted broadcast is a wake-up on 'broadcasts' (any node's expander looks), and a broadcast is
 * expanded under its 'broadcast-expansion' lease, so two expanders never expand one broadcast at
 * once; the lease is renewed after each committed batch and released when the broadcast is done
 * or the expander stops. On one node (LocalCoordination) the lease is always granted.
 *
 * What a cluster needs beyond this (not built: LMDB serves one node):
 *  - nextActive() that skips broadcasts whose lease another node holds (an `excluding` list or a
 *    join on the lease rows): here a broadcast owned elsewhere ends the round, and the expander
 *    looks again a lease's length later, so a second node waits for the first broadcast instead
 *    of expanding the next one beside it;
 *  - the lease's generation checked by the batch's commit (MessagesPort.commit's
 *    broadcastProgress), as queue leases fence outcomes: today the cursor check (a batch must
 *    start at the stored cursor) is the fence, which refuses a late writer's batch but as an
 *    error, retried with backoff, rather than as "not yours any more".
 */
import type { Logger } from 'pino';
import { domainOf, recipientKey } from '../domain/address.js';
import { isAppError } from '../domain/errors.js';
import { LocalCoordination } from '../coordination/local.js';
import type { Coordination, Lease } from '../coordination/port.js';
import { systemClock, type Clock, type Timer } from '../queue/clock.js';
import { BroadcastCanceled, type BroadcastFailure, type BroadcastRecord } from '../store/port/broadcasts.js';
import type { AcceptedMessage } from '../store/port/messages.js';
import type { BroadcastCommon, BroadcastEntry } from './broadcast.js';
import { entryMessage, type EntryContext } from './broadcast-entry.js';
import { splitSuppressed } from './policy.js';
import { enqueue } from './enqueue.js';
import { engagementOf } from './engagement.js';
import type { SubmissionDeps } from './deps.js';

/**
 * Entries per write transaction. Larger writes amortize the commit, but the transaction's
 * callback runs on the main thread and holds it (and every HTTP request) for its whole length,
 * and a send whose write lands in the same LMDB batch waits for that callback and for the
 * batch's fsync. Measured since the expansion commits requests (bench/broadcast.mjs, 10,000
 * entries, 2 cores at load 3-5, back to back): 100 per write committed 2,150-2,330 messages/s
 * alone, 50 per write 1,170-1,880 (each write's fsync and turn is a fixed cost, now that no pool
 * bounds the rate); 50 gave a lower p99 to the sends meanwhile (57-70 ms against 97-234 ms), which
 * PREPARE_SLICE and giving way to the others' writes before each commit give back to 100 (below,
 * and the store's giveWay: store/lmdb/repos/messages.ts).
 */
const COMMIT_BATCH = 100;
/**
 * Writes in flight at once. With two, the next broadcast write was always queued while the
 * previous one committed, so nearly every LMDB batch held one and a send waited for it; with
 * one, the sends that come while a broadcast write commits can go in a batch without one (the
 * expander yields a turn before each write), and the next batch is prepared while this one
 * commits. Measured when the pool still built every entry before its commit: p99 of a
 * transactional send during the expansion 150-380 ms with 200 x 2, 80-110 ms with 100 x 1, at the
 * same rate (bench/RESULTS.md, broadcast section); and since it commits requests: 50 x 2 commits
 * no faster than 100 x 1 (2,110-2,280 messages/s) with a worse p99 (92-109 ms). Each write
 * checks that it starts at the stored cursor (store/broadcasts.ts), so when one fails, a later
 * one rolls back too and no entry is skipped.
 */
const COMMITS_IN_FLIGHT = 1;
/**
 * Entries prepared per turn of the event loop. Preparing is main-thread work only (suppression
 * reads, the subject, the record), and a whole batch prepared in one turn held the HTTP sends that
 * came meanwhile for all of it: p99 of the sends during the expansion 145-234 ms in one turn, 86-94
 * ms in slices of 25, at the same rate (2,290-2,480 messages/s).
 */
const PREPARE_SLICE = 25;
type BroadcastRow = { index: number; entry: BroadcastEntry };

interface PreparedBatch {
  messages: AcceptedMessage[];
  skipped: number;
  failures: BroadcastFailure[];
  suppressed: string[];
}

export interface ExpanderOptions {
  /** Timers for the retry of a failed expansion (fake in tests). */
  clock?: Clock;
  /** First retry delay after a failed expansion; doubles per failure in a row up to maxRetryMs. */
  retryMs?: number;
  maxRetryMs?: number;
  /**
   * Wake-ups and the broadcasts' leases (Submission's). Default: a LocalCoordination of its own
   * (node 'local', on `clock`), which grants every lease.
   */
  coordination?: Coordination;
  /** A broadcast's lease lasts this long unless renewed (after each committed batch). */
  leaseMs?: number;
}

/**
 * Default lease of a broadcast's expansion: many batches long (a batch commits in well under a
 * second), so renewing after each batch keeps it, and a node that died holding it blocks the
 * broadcast for about a minute.
 */
const LEASE_MS = 60_000;

export class BroadcastExpander {
  private running: Promise<void> | null = null;
  private stopping = false;
  private again = false;
  private retryTimer: Timer | null = null;
  /** Failed expansions in a row (backoff). */
  private failuresInRow = 0;
  private readonly clock: Clock;
  private readonly retryMs: number;
  private readonly maxRetryMs: number;
  private readonly coordination: Coordination;
  private readonly leaseMs: number;
  private unsubscribe: (() => void) | null = null;

  constructor(
    private readonly deps: SubmissionDeps,
    private readonly logger: Logger,
    opts: ExpanderOptions = {},
  ) {
    this.clock = opts.clock ?? systemClock();
    this.retryMs = opts.retryMs ?? 5_000;
    this.maxRetryMs = opts.maxRetryMs ?? 300_000;
    this.coordination = opts.coordination ?? new LocalCoordination({ nodeId: 'local', clock: this.clock });
    this.leaseMs = opts.leaseMs ?? LEASE_MS;
  }

  async start(): Promise<void> {
    this.stopping = false;
    // A broadcast accepted (on any node) wakes the expander; a lost wake-up waits for the next one
    // or for the look again after a broadcast owned elsewhere, and a restart finds every broadcast.
    this.unsubscribe ??= this.coordination.onWake('broadcasts', () => this.kick());
    this.kick(); // resume broadcasts interrupted by a stop or a crash
  }

  async stop(): Promise<void> {
    this.unsubscribe?.();
    this.unsubscribe = null;
    this.stopping = true;
    this.retryTimer?.cancel();
    this.retryTimer = null;
    await this.running;
  }

  /** Called on a wake-up on 'broadcasts' (a broadcast was accepted), and by the retry timer. */
  kick(): void {
    if (this.stopping) return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.retryTimer?.cancel();
    this.retryTimer = null;
    this.running = this.expandAll()
      .then(() => {
        this.failuresInRow = 0;
      })
      .catch((err) => {
        // Kicks that came during the failed run wait for the retry too: running again at once
        // would hammer whatever failed (a full disk, a broken store) without any backoff.
        this.again = false;
        this.failuresInRow++;
        const delayMs = Math.min(this.maxRetryMs, this.retryMs * 2 ** (this.failuresInRow - 1));
        this.logger.error({ err, retryInMs: delayMs, failuresInRow: this.failuresInRow }, 'broadcast expansion failed; retrying');
        this.scheduleRetry(delayMs);
      })
      .finally(() => {
        this.running = null;
        if (this.again && !this.stopping) {
          this.again = false;
          this.kick();
        }
      });
  }

  /** Resolves once no expansion is running (joins a running expansion; tests, shutdown). */
  async drain(): Promise<void> {
    this.kick();
    while (this.running) await this.running;
  }

  private scheduleRetry(delayMs: number): void {
    if (this.stopping) return;
    this.retryTimer?.cancel();
    this.retryTimer = this.clock.setTimer(() => {
      this.retryTimer = null;
      this.kick();
    }, delayMs);
  }

  /**
   * Expands until no broadcast is left (or stop() was called), each under its lease. A broadcast
   * another holder expands ends the round (nextActive would give it again); the expander looks
   * again once that lease could have lapsed, in case its holder stopped without finishing.
   */
  private async expandAll(): Promise<void> {
    for (;;) {
      if (this.stopping) return;
      const next = await this.deps.store.broadcasts.nextActive<BroadcastCommon>();
      if (!next) return;
      const lease = await this.coordination.own('broadcast-expansion', next.id, this.leaseMs);
      if (!lease) {
        this.logger.debug({ broadcastId: next.id }, 'broadcast expanded by another holder; looking again later');
        return this.scheduleRetry(this.leaseMs);
      }
      try {
        // Read again under the lease: the holder before us may have committed batches since.
        const b = await this.deps.store.broadcasts.get<BroadcastCommon>(next.id);
        if (b?.state === 'expanding') await this.expandBroadcast(b, lease);
      } finally {
        await lease.release();
      }
    }
  }

  /**
   * One broadcast, COMMIT_BATCH entries per write, each write with the cursor after its last
   * entry, at most COMMITS_IN_FLIGHT writes pending: the next batch is read and prepared while
   * the last one commits. A crash resumes after the last committed write and never commits an
   * entry twice.
   */
  private async expandBroadcast(b: BroadcastRecord<BroadcastCommon>, lease: Lease): Promise<void> {
    const commits: Promise<void>[] = [];
    try {
      await this.expandBatches(b, commits, lease);
    } catch (err) {
      // The writes still in flight roll back on their own (their start is not the cursor any
      // more); waited for so that nothing of this run is left running, and the first error kept.
      await Promise.allSettled(commits);
      throw err;
    }
    await this.settleAll(commits);
  }

  /**
   * The loop of expandBroadcast: reads and prepares a batch, then hands it to the store. The
   * lease is renewed once the batch before has committed; lost, the loop stops (another holder
   * goes on from the stored cursor).
   */
  private async expandBatches(b: BroadcastRecord<BroadcastCommon>, commits: Promise<void>[], lease: Lease): Promise<void> {
    let from = b.cursor;
    for (;;) {
      if (this.stopping) return; // what is prepared but not committed is prepared again after the restart
      const rows = await this.deps.store.broadcasts.entries<BroadcastEntry>(b.id, from, COMMIT_BATCH);
      // Nothing left to read and the last write already moved the cursor to the end (a broadcast
      // with no entries left still gets its one write, which marks it done).
      if (rows.length === 0 && from >= b.total && from > b.cursor) return;
      const end = rows.length > 0 ? rows[rows.length - 1]!.index + 1 : b.total;
      const batch = await this.prepareBatch(b, rows);
      if (commits.length >= COMMITS_IN_FLIGHT && !(await this.settled(commits.shift()!))) return;
      if (from > b.cursor && !(await lease.renew())) {
        this.logger.warn({ broadcastId: b.id }, 'the lease of a broadcast expansion was lost; another holder goes on');
        return;
      }
      // Let the I/O that came meanwhile (HTTP sends, SMTP) run before the commit's transaction,
      // which holds the main thread for its whole length, and let their writes commit first.
      await new Promise<void>((resolve) => setImmediate(resolve));
      await this.deps.store.messages.giveWay();
      const commit = this.commitBatch(b, batch, { from, cursor: end });
      // Awaited in turn (or by expandBroadcast); marked handled now so a failing commit is not an
      // unhandled rejection while the next batch is prepared.
      commit.catch(() => undefined);
      commits.push(commit);
      from = end;
      if (rows.length === 0) return;
    }
  }

  /** Waits for every commit; rethrows the first failure that is not a cancel. */
  private async settleAll(commits: Promise<void>[]): Promise<void> {
    for (const r of await Promise.allSettled(commits)) {
      if (r.status === 'rejected') {
        this.canceledOrThrow(r.reason);
        return; // canceled: the later commits rolled back for the same reason
      }
    }
  }

  /** False when the commit found the broadcast canceled (nothing more to expand). */
  private async settled(commit: Promise<void>): Promise<boolean> {
    return commit.then(
      () => true,
      (err) => (this.canceledOrThrow(err), false),
    );
  }

  /** A cancel that came while a batch was prepared rolled that batch back: the broadcast is over. */
  private canceledOrThrow(err: unknown): void {
    if (!(err instanceof BroadcastCanceled)) throw err;
    this.logger.info({ broadcastId: err.broadcastId }, 'broadcast canceled during expansion');
  }

  /**
   * One batch, on the main thread: suppressed entries become failure rows at once, an entry whose
   * subject does not render with its data too, the others messages to commit as requests. A turn
   * is yielded every PREPARE_SLICE entries, so a request that comes meanwhile waits for a slice,
   * not for the whole batch.
   */
  private async prepareBatch(b: BroadcastRecord<BroadcastCommon>, rows: BroadcastRow[]): Promise<PreparedBatch> {
    const { store, domains } = this.deps;
    // Looked up once per batch: the same for every entry but its message id and recipient, and
    // three store reads per entry were a visible part of the main thread's profile.
    // The parts are the broadcast's, the same for every entry: a large one is checked off the
    // main thread once, before the loop, and every entry's check finds its verdict.
    await this.deps.templateCheck.prepare(b.common.template);
    const ctx: EntryContext = {
      templates: this.deps.templateCheck,
      signingDomain: (await domains.signingKey({ accountId: b.accountId, domainName: domainOf(b.common.from.email) }))?.domain,
      engagement: await engagementOf(this.deps, { messageId: '', channelId: b.channelId, mailType: 'broadcast', tracking: b.common.tracking, recipients: [], from: b.common.from.email }),
    };
    const batch: PreparedBatch = { messages: [], skipped: 0, failures: [], suppressed: [] };
    const suppressedAll = new Set<string>();
    for (const [i, row] of rows.entries()) {
      if (i > 0 && i % PREPARE_SLICE === 0) await new Promise<void>((resolve) => setImmediate(resolve));
      const { index, entry } = row;
      const envelope = [...new Set([...entry.to, ...entry.cc, ...entry.bcc].map((a) => recipientKey(a.email)))];
      const { send, suppressed } = await splitSuppressed(store, b.channelId, 'broadcast', envelope);
      for (const email of suppressed) suppressedAll.add(email);
      if (send.length === 0) {
        batch.skipped++;
        batch.failures.push({ index, ...recipientsOf(entry), code: 'recipients_suppressed', message: 'Every recipient of this entry is suppressed' });
        continue;
      }
      try {
        batch.messages.push(entryMessage(b, row, { send, suppressed }, ctx));
      } catch (err) {
        // An input error (the subject's template with this entry's data) is the entry's; any
        // other fails the expansion, which is retried.
        if (!isAppError(err)) throw err;
        batch.failures.push({ index, ...recipientsOf(entry), code: err.code, message: err.message });
      }
    }
    batch.suppressed = [...suppressedAll];
    return batch;
  }

  /**
   * Commits a batch's messages with the broadcast's new cursor, in one verb (BroadcastCanceled:
   * nothing committed); background: the next giveWay() does not wait for it.
   */
  private async commitBatch(b: BroadcastRecord<BroadcastCommon>, batch: PreparedBatch, range: { from: number; cursor: number }): Promise<void> {
    await enqueue(this.deps, {
      messages: batch.messages,
      broadcastProgress: { broadcastId: b.id, ...range, skipped: batch.skipped, failures: batch.failures, suppressed: batch.suppressed },
      background: true,
    });
  }
}

function recipientsOf(entry: BroadcastEntry): Pick<BroadcastFailure, 'to' | 'cc' | 'bcc'> {
  return { to: entry.to, cc: entry.cc, bcc: entry.bcc };
}
