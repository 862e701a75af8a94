/**
 * The LMDB engine's LmdbMessages: the port's verbs over store/lmdb/messages.ts (the commit),
 * signing.ts (the finishing stage) and client-message-ids.ts. Reads are lmdb-js's synchronous
 * gets, answered in a microtask; each write is one Store.write in LMDB's group commit.
 */
import type { MessageRecord } from '../../../domain/types.js';
import type { Store } from '../env.js';
import type {
  FailedEntry,
  FinishedMessage,
  FinishingTries,
  MessagesPort,
  SubmissionCommit,
  UnfinishedFailure,
  UnfinishedMessage,
} from '../../port/messages.js';
import { messagesByClientMessageId } from '../client-message-ids.js';
import type { ScheduleChange } from '../../port/schedule.js';
import { cancelMessage, rescheduleMessage } from '../message-schedule.js';
import { allMessages, commitMessages, countMessages, getBody, getMessage } from '../messages.js';
import { messageForAttempt } from '../delivery-messages.js';
import {
  awaitingSignatureCount,
  awaitsSignature,
  endUnfinished,
  oldestAwaitingSignatureMs,
  pendingSignaturesAfter,
  recordFinishingTries,
  storeSignedBodies,
  unsignedMessage,
} from '../signing.js';

/**
 * At most this long a background commit (a broadcast's expansion) waits for the other writes in
 * flight to commit first: bounded, so that a steady stream of other writes slows the expansion
 * without stopping it. With it, a send during the expansion waited p50 25 ms and p99 69-72 ms
 * instead of 43-45 and 86-94 (the sends alone: p99 14-19 ms), and the expansion committed
 * 2,200-2,310 messages/s (bench/RESULTS.md, broadcast section).
 */
const OTHERS_FIRST_MS = 20;

export class LmdbMessages implements MessagesPort {
  /** Background commits started and not yet settled: the others are the writes they give way to. */
  private background = 0;

  constructor(private readonly store: Store) {}

  cancelMessage(id: string, now: Date): Promise<ScheduleChange> {
    return cancelMessage(this.store, id, now);
  }

  rescheduleMessage(q: { id: string; scheduledAt: string; nowMs: number }): Promise<ScheduleChange> {
    return rescheduleMessage(this.store, q);
  }

  async commit(input: SubmissionCommit): Promise<void> {
    if (!input.background) return commitMessages(this.store, input);
    this.background++;
    try {
      await commitMessages(this.store, input);
    } finally {
      this.background--;
    }
  }

  /**
   * Requests first: while writes other than the background ones are pending (a send's commit,
   * the finishing stage's), waits up to OTHERS_FIRST_MS for them, so that the background write
   * does not join their LMDB batch, whose requests would then wait for its callback too.
   */
  async giveWay(): Promise<void> {
    const until = performance.now() + OTHERS_FIRST_MS;
    while (this.store.writesInFlight > this.background && performance.now() < until) {
      await new Promise<void>((resolve) => setTimeout(resolve, 1));
    }
  }

  async get(id: string): Promise<MessageRecord | undefined> {
    return getMessage(this.store, id);
  }

  async body(id: string): Promise<Buffer | undefined> {
    return getBody(this.store, id);
  }

  async withBody(id: string): Promise<{ message: MessageRecord; body: Buffer } | undefined> {
    // Decoded once for the attempt and its outcome (delivery-messages.ts).
    const message = messageForAttempt(this.store, id);
    const body = message && (await getBody(this.store, id));
    return message && body ? { message, body } : undefined;
  }

  async count(): Promise<number> {
    return countMessages(this.store);
  }

  async all(): Promise<MessageRecord[]> {
    return allMessages(this.store);
  }

  async byClientMessageId(accountId: string, header: string): Promise<string[]> {
    return messagesByClientMessageId(this.store, accountId, header);
  }

  async unfinishedAfter(after: string | undefined, limit: number): Promise<string[]> {
    return pendingSignaturesAfter(this.store, after, limit);
  }

  async unfinishedCount(): Promise<number> {
    return awaitingSignatureCount(this.store);
  }

  async oldestUnfinishedMs(nowMs: number): Promise<number> {
    return oldestAwaitingSignatureMs(this.store, nowMs);
  }

  async isUnfinished(id: string): Promise<boolean> {
    return awaitsSignature(this.store, id);
  }

  async unfinished(id: string): Promise<UnfinishedMessage | undefined> {
    return unsignedMessage(this.store, id);
  }

  storeFinished(items: readonly FinishedMessage[]): Promise<number> {
    return storeSignedBodies(this.store, items);
  }

  recordFinishingTries(id: string, tries: FinishingTries): Promise<void> {
    return recordFinishingTries(this.store, id, tries);
  }

  endUnfinished(q: { messageId: string; failure: UnfinishedFailure; failedEntry?: FailedEntry; now?: Date }): Promise<string[]> {
    return endUnfinished(this.store, q.messageId, q.failure, { now: q.now, failedEntry: q.failedEntry });
  }
}
