/**
 * The retry and drop of one message's jobs through the API (QueuePort.retryMessage and
 * dropMessage, store/port/queue.ts): the operator's verbs (queue-operator.ts) applied to the
 * message's jobs (to one destination when asked) in one transaction.
 *
 * Atomic across nodes: the message's open job rows are locked first (queue-tx.ts
 * lockJobsOfMessage, FOR UPDATE): a lease or outcome in progress is waited for, and no lease
 * takes one of them until COMMIT, so the drop's "nothing while one is leased" holds on what it
 * read, and the verbs act on exactly the states they reported.
 */
import type { DeliveryJob } from '../../domain/types.js';
import type { MessageJobsOutcome } from '../port/queue.js';
import type { Tx } from './client.js';
import type { PgContext } from './context.js';
import { unfinishedAmong } from './messages-tx.js';
import { dropLockedJobs, retryLockedJobs } from './queue-operator.js';
import { lockJobsOfMessage } from './queue-tx.js';

type Target = { messageId: string; domain?: string };

async function lockMatching(tx: Tx, o: Target): Promise<DeliveryJob[]> {
  return (await lockJobsOfMessage(tx, o.messageId)).filter((j) => o.domain === undefined || j.domain === o.domain);
}

/** The outcome: `changed` of `matched` replaced by what the verb made of them. */
async function outcome(tx: Tx, o: Target, matched: DeliveryJob[], changed: DeliveryJob[]): Promise<MessageJobsOutcome> {
  const after = new Map(changed.map((j) => [j.id, j]));
  return {
    matched: matched.length,
    changed: changed.length,
    leased: matched.filter((j) => j.state === 'leased').length,
    jobs: matched.map((j) => after.get(j.id) ?? j),
    preparing: (await unfinishedAmong(tx, [o.messageId])).has(o.messageId),
  };
}

/** The message's queued jobs (to `domain` when given) become due now; leased ones finish their attempt. */
export async function retryMessageJobs(ctx: PgContext, o: Target & { nowMs: number }): Promise<MessageJobsOutcome> {
  return ctx.begin(async (tx) => {
    const matched = await lockMatching(tx, o);
    const retried = await retryLockedJobs(tx, matched.filter((j) => j.state === 'queued').map((j) => j.id), o.nowMs);
    return outcome(tx, o, matched, retried);
  });
}

/**
 * The message's queued jobs (to `domain` when given) end as the operator's drop ends them, all
 * or nothing: while one of them is leased (that attempt may deliver), nothing is dropped.
 */
export async function dropMessageJobs(ctx: PgContext, o: Target & { now: Date }): Promise<MessageJobsOutcome> {
  return ctx.begin(async (tx) => {
    const matched = await lockMatching(tx, o);
    if (matched.some((j) => j.state === 'leased')) return outcome(tx, o, matched, []);
    const dropped = await dropLockedJobs(tx, matched.filter((j) => j.state === 'queued'), o.now);
    return outcome(tx, o, matched, dropped);
  });
}
