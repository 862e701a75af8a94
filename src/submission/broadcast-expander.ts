/**
 * Turns accepted broadcasts into messages, a batch at a time: suppressed entries are skipped,
 * the rest are rendered and signed in the worker pool in parallel, and each batch's messages
 * are committed together with the broadcast's cursor. One broadcast at a time, oldest first.
 * An entry that cannot be built becomes a failure row (store/broadcasts.ts); an expansion that
 * fails as a whole (store error, full disk, signing key unreadable) is retried by a timer with
 * backoff, so a broadcast never waits for a restart or for the next broadcast.
 */
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import { domainOf, recipientKey } from '../domain/address.js';
import { isAppError } from '../domain/errors.js';
import { systemClock, type Clock, type Timer } from '../queue/clock.js';
import { advanceBroadcastInTxn, backfillChannelBroadcasts, broadcastEntries, nextActiveBroadcast, BroadcastCanceled, type BroadcastFailure, type BroadcastRecord } from '../store/broadcasts.js';
import type { AcceptedMessage } from '../store/messages.js';
import type { BroadcastCommon, BroadcastEntry } from './broadcast.js';
import { splitSuppressed } from './policy.js';
import { simulatedBounces } from './sender.js';
import { enqueue } from './enqueue.js';
import { engagementFor } from './engagement.js';
import type { SubmissionDeps } from './deps.js';
import type { EngagementInput } from '../workers/engagement.js';
import { buildEach, ChunkWindow } from './build-chunks.js';
import type { BuildRequest, BuildResult } from './ports.js';

/**
 * Entries per write transaction. Larger writes amortize the commit, but the transaction's
 * callback runs on the main thread and holds it (and every HTTP request) for its whole length,
 * and a send whose write lands in the same LMDB batch waits for that callback and for the
 * batch's fsync. 100 entries hold it about half as long as 200 did, at the same rate.
 */
const COMMIT_BATCH = 100;
/**
 * Writes in flight at once. With two, the next broadcast write was always queued while the
 * previous one committed, so nearly every LMDB batch held one and a send waited for it; with
 * one, the sends that come while a broadcast write commits can go in a batch without one (the
 * expander yields a turn before each write). Measured on 2 loaded cores, 10,000 entries: p99 of
 * a transactional send during the expansion 150-380 ms with 200 x 2, 80-110 ms with 100 x 1,
 * at the same rate (bench/RESULTS.md, broadcast section). Each write checks that it starts at
 * the stored cursor (store/broadcasts.ts), so when one fails, a later one rolls back too and no
 * entry is skipped.
 */
const COMMITS_IN_FLIGHT = 1;
/**
 * Entries per worker task (one hop between threads per chunk, not per message), and chunks built
 * ahead at once: 800 entries, eight writes' worth, so the threads go on building while the main
 * thread waits for a commit instead of idling once the next write's entries are ready. A
 * transactional send does not queue behind them: the pool runs tasks a client waits for first
 * (workers/task-lanes.ts).
 */
const TASK_CHUNK = 25;
const TASK_WINDOW = 32;

type BroadcastRow = { index: number; entry: BroadcastEntry };

interface BuiltBatch {
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
}

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

  constructor(
    private readonly deps: SubmissionDeps,
    private readonly logger: Logger,
    opts: ExpanderOptions = {},
  ) {
    this.clock = opts.clock ?? systemClock();
    this.retryMs = opts.retryMs ?? 5_000;
    this.maxRetryMs = opts.maxRetryMs ?? 300_000;
  }

  async start(): Promise<void> {
    this.stopping = false;
    const indexed = await backfillChannelBroadcasts(this.deps.store);
    if (indexed > 0) this.logger.info({ broadcasts: indexed }, 'older broadcasts added to the channel index');
    this.kick(); // resume broadcasts interrupted by a stop or a crash
  }

  async stop(): Promise<void> {
    this.stopping = true;
    this.retryTimer?.cancel();
    this.retryTimer = null;
    await this.running;
  }

  /** Called when a broadcast was accepted, and by the retry timer. */
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

  /** Expands until no broadcast is left (or stop() was called). */
  private async expandAll(): Promise<void> {
    for (;;) {
      if (this.stopping) return;
      const b = nextActiveBroadcast<BroadcastCommon>(this.deps.store);
      if (!b) return;
      await this.expandBroadcast(b);
    }
  }

  /**
   * One broadcast as a stream of chunks: up to TASK_WINDOW chunks are built in the worker pool at
   * once, across commit boundaries, so the threads do not idle while the main thread commits
   * (fsync) or prepares the next entries (bench/RESULTS.md, broadcast section). Built chunks are
   * taken in entry order and committed COMMIT_BATCH entries at a time, each write with the cursor
   * after its last chunk, at most COMMITS_IN_FLIGHT writes pending: a crash resumes after the last
   * committed write and never builds an entry twice into the store.
   */
  private async expandBroadcast(first: BroadcastRecord<BroadcastCommon>): Promise<void> {
    const window = new ChunkWindow(
      (from, count) => broadcastEntries<BroadcastEntry>(this.deps.store, first.id, from, count),
      (rows) => this.buildBatch(first, rows),
      { chunk: TASK_CHUNK, window: TASK_WINDOW },
      first.cursor,
    );
    const commits: Promise<void>[] = [];
    try {
      await this.expandChunks(first, window, commits);
    } catch (err) {
      // The writes still in flight roll back on their own (their start is not the cursor any
      // more); waited for so that nothing of this run is left running, and the first error kept.
      window.abandon();
      await Promise.allSettled(commits);
      throw err;
    }
    window.abandon();
    await this.settleAll(commits);
  }

  /** The loop of expandBroadcast: gathers built chunks into writes and hands them to the store. */
  private async expandChunks(first: BroadcastRecord<BroadcastCommon>, window: ChunkWindow<BroadcastRow, BuiltBatch>, commits: Promise<void>[]): Promise<void> {
    let group: BuiltBatch = emptyBatch();
    let entries = 0;
    let committedTo = first.cursor;
    for (;;) {
      if (this.stopping) return; // what is built but not committed is built again after the restart
      const next = await window.next();
      if (next) {
        mergeInto(group, next.built);
        entries += next.rows;
      }
      const end = next ? next.end : first.total;
      if (next && entries < COMMIT_BATCH) continue;
      // Nothing left to read and the last write already moved the cursor to the end (a broadcast
      // with no entries still gets its one write, which marks it done).
      if (!next && committedTo >= first.total && committedTo > first.cursor) return;
      if (commits.length >= COMMITS_IN_FLIGHT && !(await this.settled(commits.shift()!))) return;
      // Let the I/O that came meanwhile (HTTP sends, SMTP) run before the commit's transaction,
      // which holds the main thread for its whole length.
      await new Promise<void>((resolve) => setImmediate(resolve));
      const commit = this.commitBatch(first, group, { from: committedTo, cursor: end });
      // Awaited in turn (or by expandBroadcast); marked handled now so a failing commit is not an
      // unhandled rejection while the next chunks build.
      commit.catch(() => undefined);
      commits.push(commit);
      committedTo = end;
      group = emptyBatch();
      entries = 0;
      if (!next) return;
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

  /** A cancel that came while a batch was built rolled that batch back: the broadcast is over. */
  private canceledOrThrow(err: unknown): void {
    if (!(err instanceof BroadcastCanceled)) throw err;
    this.logger.info({ broadcastId: err.broadcastId }, 'broadcast canceled during expansion');
  }

  /**
   * One chunk: suppressed entries become failure rows at once; the rest are built in the worker
   * pool in one task (build-chunks.ts), each entry settling on its own: one that cannot be built
   * becomes a failure row, the others messages, in entry order.
   */
  private async buildBatch(b: BroadcastRecord<BroadcastCommon>, rows: BroadcastRow[]): Promise<BuiltBatch> {
    const { store, domains } = this.deps;
    const dkim = domains.signingKey({ accountId: b.accountId, domainName: domainOf(b.common.from.email) });
    // Looked up once per chunk: the same for every entry but its message id and recipient, and
    // three store reads per entry were a visible part of the main thread's profile.
    const engagement = engagementFor(this.deps, { messageId: '', channelId: b.channelId, mailType: 'broadcast', tracking: b.common.tracking, recipients: [], from: b.common.from.email });
    const batch: BuiltBatch = { messages: [], skipped: 0, failures: [], suppressed: [] };
    const suppressedAll = new Set<string>();
    const pending: PendingEntry[] = [];
    for (const { index, entry } of rows) {
      const envelope = [...new Set([...entry.to, ...entry.cc, ...entry.bcc].map((a) => recipientKey(a.email)))];
      const { send, suppressed } = splitSuppressed(store, b.channelId, 'broadcast', envelope);
      for (const email of suppressed) suppressedAll.add(email);
      if (send.length === 0) {
        batch.skipped++;
        batch.failures.push({ index, ...recipientsOf(entry), code: 'recipients_suppressed', message: 'Every recipient of this entry is suppressed' });
        continue;
      }
      pending.push(this.prepareOne(b, index, entry, { send, suppressed, dkim, engagement }));
    }
    const settled = await buildEach(this.deps.builder, pending.map((p) => p.request));
    settled.forEach((s, i) => {
      const p = pending[i]!;
      if (s.status === 'fulfilled') {
        batch.messages.push(acceptedOf(b, p, s.value));
        return;
      }
      const err = s.reason as Error & { code?: string };
      const code = isAppError(err) ? err.code : (err.code ?? 'internal_error');
      batch.failures.push({ index: p.index, ...recipientsOf(p.entry), code, message: err.message });
    });
    batch.suppressed = [...suppressedAll];
    return batch;
  }

  /** Commits a batch's messages with the broadcast's new cursor (BroadcastCanceled: nothing committed). */
  private async commitBatch(b: BroadcastRecord<BroadcastCommon>, batch: BuiltBatch, range: { from: number; cursor: number }): Promise<void> {
    await enqueue(this.deps, {
      messages: batch.messages,
      alsoInTxn: () => {
        advanceBroadcastInTxn(this.deps.store, b.id, {
          ...range,
          messageIds: batch.messages.map((m) => m.record.id),
          finished: batch.messages.filter((m) => m.record.deliveryType === 'sandbox').length,
          skipped: batch.skipped,
          failures: batch.failures,
          suppressed: batch.suppressed,
        });
      },
    });
  }

  /** What the worker pool needs to build one entry's message, and what the record keeps of it. */
  private prepareOne(
    b: BroadcastRecord<BroadcastCommon>,
    index: number,
    entry: BroadcastEntry,
    r: { send: string[]; suppressed: string[]; dkim: ReturnType<SubmissionDeps['domains']['signingKey']>; engagement: EngagementInput | undefined },
  ): PendingEntry {
    const c = b.common;
    const id = randomUUID();
    const messageIdHeader = `<${id}@${domainOf(c.from.email)}>`;
    const request: BuildRequest = {
      template: { ...c.template, data: { ...(c.template.data ?? {}), ...entry.data } },
      compose: {
        from: c.from,
        to: entry.to,
        cc: entry.cc,
        replyTo: c.replyTo,
        attachments: c.attachments,
        headers: entry.headers,
        messageId: messageIdHeader,
        date: new Date().toUTCString(),
      },
      // A token names the recipient only when the message has exactly one, as engagementFor does
      // (domain/tracking-token.ts).
      engagement: r.engagement && { ...r.engagement, messageId: id, recipient: r.send.length === 1 ? r.send[0]! : '' },
    };
    // Signed after the commit (signing.ts), with the key the domain has then.
    return { index, entry, id, messageIdHeader, send: r.send, suppressed: r.suppressed, request, signingDomain: r.dkim?.domain };
  }
}

interface PendingEntry {
  index: number;
  entry: BroadcastEntry;
  id: string;
  messageIdHeader: string;
  send: string[];
  suppressed: string[];
  request: BuildRequest;
  /** The DKIM d= domain, when the domain has a key. */
  signingDomain: string | undefined;
}

function emptyBatch(): BuiltBatch {
  return { messages: [], skipped: 0, failures: [], suppressed: [] };
}

/** Adds a built chunk to the write being gathered (suppressed recipients counted once). */
function mergeInto(group: BuiltBatch, chunk: BuiltBatch): void {
  group.messages.push(...chunk.messages);
  group.skipped += chunk.skipped;
  group.failures.push(...chunk.failures);
  group.suppressed = [...new Set([...group.suppressed, ...chunk.suppressed])];
}

function recipientsOf(entry: BroadcastEntry): Pick<BroadcastFailure, 'to' | 'cc' | 'bcc'> {
  return { to: entry.to, cc: entry.cc, bcc: entry.bcc };
}

/** The message of one built entry, as committed. */
function acceptedOf(b: BroadcastRecord<BroadcastCommon>, p: PendingEntry, out: BuildResult): AcceptedMessage {
  const c = b.common;
  const { entry } = p;
  return {
    record: {
      id: p.id,
      accountId: b.accountId,
      channelId: b.channelId,
      mailType: 'broadcast',
      mailSource: 'api',
      deliveryType: c.deliveryType,
      broadcastId: b.id,
      createdAt: new Date().toISOString(),
      messageIdHeader: p.messageIdHeader,
      subject: out.subject,
      from: c.from,
      to: entry.to,
      cc: entry.cc,
      bcc: entry.bcc,
      replyTo: c.replyTo,
      tracking: c.tracking,
      tags: entry.tags,
      headers: entry.headers,
      metadata: entry.metadata,
      attachments: c.attachments.map((a) => ({ fileName: a.fileName, disposition: a.disposition, size: a.size, contentType: a.contentType })),
      text: out.text,
      html: out.html,
      size: out.size,
      recipients: p.send,
      suppressed: p.suppressed,
    },
    body: out.raw,
    signingDomain: p.signingDomain,
    simulatedBounces: c.deliveryType === 'sandbox' ? simulatedBounces(p.send) : undefined,
  };
}
