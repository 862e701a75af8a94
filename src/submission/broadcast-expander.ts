/**
 * Turns accepted broadcasts into messages, a batch at a time: suppressed entries are skipped,
 * the rest are rendered and signed in the worker pool in parallel, and each batch's messages
 * are committed together with the broadcast's cursor. One broadcast at a time, oldest first.
 */
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import { domainOf, recipientKey } from '../domain/address.js';
import { isAppError } from '../domain/errors.js';
import { advanceBroadcastInTxn, broadcastEntries, nextActiveBroadcast, type BroadcastRecord } from '../store/broadcasts.js';
import type { AcceptedMessage } from '../store/messages.js';
import type { BroadcastCommon, BroadcastEntry } from './broadcast.js';
import { splitSuppressed } from './policy.js';
import { simulatedBounces } from './sender.js';
import { enqueue } from './enqueue.js';
import { engagementFor } from './engagement.js';
import type { SubmissionDeps } from './submission.js';

const BATCH = 100;

interface BuiltBatch {
  messages: AcceptedMessage[];
  skipped: number;
  failures: BroadcastRecord['failures'];
}

export class BroadcastExpander {
  private running: Promise<void> | null = null;
  private stopping = false;
  private again = false;

  constructor(private readonly deps: SubmissionDeps, private readonly logger: Logger) {}

  async start(): Promise<void> {
    this.stopping = false;
    this.kick(); // resume broadcasts interrupted by a stop or a crash
  }

  async stop(): Promise<void> {
    this.stopping = true;
    await this.running;
  }

  /** Called when a broadcast was accepted. */
  kick(): void {
    if (this.stopping) return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = this.expandAll()
      .catch((err) => this.logger.error({ err }, 'broadcast expansion failed; will retry on the next broadcast or restart'))
      .finally(() => {
        this.running = null;
        if (this.again && !this.stopping) {
          this.again = false;
          this.kick();
        }
      });
  }

  /** Resolves once no broadcast is left to expand (joins a running expansion; tests, shutdown). */
  async drain(): Promise<void> {
    this.kick();
    while (this.running) await this.running;
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
   * One broadcast, batch after batch, pipelined: batch k+1 is built in the worker pool while
   * batch k commits (fsync), so the pool does not sit idle during commits (bench/RESULTS.md,
   * broadcast section). Commits stay in order, each with the cursor after its batch, so a crash
   * resumes after the last committed batch and never builds an entry twice into the store.
   */
  private async expandBroadcast(first: BroadcastRecord<BroadcastCommon>): Promise<void> {
    const { store } = this.deps;
    let rows = broadcastEntries<BroadcastEntry>(store, first.id, first.cursor, BATCH);
    let record = first;
    let commit: Promise<BroadcastRecord<BroadcastCommon>> | null = null;
    try {
      for (;;) {
        const built = await this.buildBatch(first, rows);
        if (commit) record = await commit;
        const cursor = rows.length > 0 ? rows[rows.length - 1].index + 1 : first.total;
        commit = this.commitBatch(record, built, cursor);
        // Awaited on the next round (or below); marked handled now so a failing commit is not an
        // unhandled rejection while the next batch builds.
        commit.catch(() => undefined);
        if (cursor >= first.total || this.stopping) break;
        // Entries from the cursor on are untouched by the pending commit (it removes earlier ones).
        rows = broadcastEntries<BroadcastEntry>(store, first.id, cursor, BATCH);
      }
    } finally {
      if (commit) await commit;
    }
  }

  private async buildBatch(b: BroadcastRecord<BroadcastCommon>, rows: Array<{ index: number; entry: BroadcastEntry }>): Promise<BuiltBatch> {
    const { store, domains } = this.deps;
    const dkim = domains.signingKey({ accountId: b.accountId, domainName: domainOf(b.common.from.email) });
    const failures: BroadcastRecord['failures'] = [];
    let skipped = 0;
    const built = await Promise.all(
      rows.map(async ({ index, entry }): Promise<AcceptedMessage | null> => {
        const envelope = [...new Set([...entry.to, ...entry.cc, ...entry.bcc].map((a) => recipientKey(a.email)))];
        const { send, suppressed } = splitSuppressed(store, b.channelId, 'broadcast', envelope);
        if (send.length === 0) {
          skipped++;
          return null;
        }
        try {
          return await this.buildOne(b, entry, { send, suppressed, dkim });
        } catch (err) {
          failures.push({ index, code: isAppError(err) ? err.code : ((err as { code?: string }).code ?? 'internal_error'), message: (err as Error).message });
          return null;
        }
      }),
    );
    return { messages: built.filter((m): m is AcceptedMessage => m !== null), skipped, failures };
  }

  /** Commits a batch's messages with the broadcast's new cursor; resolves with the updated record. */
  private async commitBatch(b: BroadcastRecord<BroadcastCommon>, batch: BuiltBatch, cursor: number): Promise<BroadcastRecord<BroadcastCommon>> {
    let next = b;
    await enqueue(this.deps, {
      messages: batch.messages,
      alsoInTxn: () => {
        next = advanceBroadcastInTxn(this.deps.store, b, { cursor, messages: batch.messages.length, skipped: batch.skipped, failures: batch.failures });
      },
    });
    return next;
  }

  private async buildOne(
    b: BroadcastRecord<BroadcastCommon>,
    entry: BroadcastEntry,
    r: { send: string[]; suppressed: string[]; dkim: ReturnType<SubmissionDeps['domains']['signingKey']> },
  ): Promise<AcceptedMessage> {
    const c = b.common;
    const id = randomUUID();
    const messageIdHeader = `<${id}@${domainOf(c.from.email)}>`;
    const out = await this.deps.builder.build({
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
      dkim: r.dkim,
      engagement: engagementFor(this.deps, { messageId: id, channelId: b.channelId, mailType: 'broadcast', tracking: c.tracking, recipients: r.send, from: c.from.email }),
    });
    return {
      record: {
        id,
        accountId: b.accountId,
        channelId: b.channelId,
        mailType: 'broadcast',
        mailSource: 'api',
        deliveryType: c.deliveryType,
        broadcastId: b.id,
        createdAt: new Date().toISOString(),
        messageIdHeader,
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
        recipients: r.send,
        suppressed: r.suppressed,
      },
      body: out.raw,
      simulatedBounces: c.deliveryType === 'sandbox' ? simulatedBounces(r.send) : undefined,
    };
  }
}
