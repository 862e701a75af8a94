/**
 * The PostgreSQL engine's MessagesPort: the submission commit (submission-commit.ts), the reads
 * (message-reads.ts), and the finishing stage's verbs (finishing-*.ts). Each write is one
 * transaction that resolves after its durable COMMIT; reads use the pool.
 */
import type { MessageRecord } from '../../../domain/types.js';
import type { FinishedMessage, FinishingTries, MessagesPort, SubmissionCommit, UnfinishedMessage } from '../../port/messages.js';
import type { PgContext } from '../context.js';
import { endUnfinished, type EndUnfinished } from '../finishing-end.js';
import { isUnfinished, oldestUnfinishedMs, unfinishedAfter, unfinishedCount, unfinishedMessage } from '../finishing-reads.js';
import { recordFinishingTries, storeFinished } from '../finishing-store.js';
import { allMessages, countMessages, getBody, getWithBody, getMessage, messagesByClientMessageId } from '../message-reads.js';
import { commitAlone, planCommit } from '../submission-commit.js';
import { cancelMessage, rescheduleMessage } from '../message-schedule.js';
import { SubmissionGroup } from '../submission-group.js';

export function pgMessages(ctx: PgContext): MessagesPort {
  const group = new SubmissionGroup(ctx);
  return {
    async commit(input: SubmissionCommit) {
      const planned = planCommit(input);
      if (!planned) return;
      // A background writer (a broadcast's expansion, 400 messages a batch) commits alone, so
      // that no request's answer waits for its batch.
      await (input.background ? commitAlone(ctx, planned) : group.commit(planned));
    },
    // Background commits never join the request group: nothing to wait for (port: resolve at once).
    giveWay: async () => {},
    get: (id: string): Promise<MessageRecord | undefined> => getMessage(ctx.sql, id),
    body: (id: string) => getBody(ctx.sql, id),
    withBody: (id: string) => getWithBody(ctx.sql, id),
    count: () => countMessages(ctx.sql),
    all: () => allMessages(ctx.sql),
    byClientMessageId: (accountId: string, header: string) => messagesByClientMessageId(ctx.sql, accountId, header),
    unfinishedAfter: (after: string | undefined, limit: number) => unfinishedAfter(ctx.sql, after, limit),
    unfinishedCount: () => unfinishedCount(ctx.sql),
    oldestUnfinishedMs: (nowMs: number) => oldestUnfinishedMs(ctx.sql, nowMs),
    isUnfinished: (id: string) => isUnfinished(ctx.sql, id),
    unfinished: (id: string): Promise<UnfinishedMessage | undefined> => unfinishedMessage(ctx.sql, id),
    storeFinished: (items: readonly FinishedMessage[]) => storeFinished(ctx, items),
    recordFinishingTries: (id: string, tries: FinishingTries) => recordFinishingTries(ctx, id, tries),
    endUnfinished: (q: EndUnfinished) => endUnfinished(ctx, q),
    cancelMessage: (id: string, now: Date) => cancelMessage(ctx, id, now),
    rescheduleMessage: (q: { id: string; scheduledAt: string; nowMs: number }) => rescheduleMessage(ctx, q),
  };
}
