/**
 * QueuePort.recordOutcomes (store/port/queue.ts): attempts' outcomes in one transaction, each
 * as if alone and in order, all or none. What an attempt means (the job afterwards, its history
 * entry, its events) is the domain's (domain/attempt-outcome.ts), the same for both engines;
 * this file fences, batches and writes it:
 *
 * 1. claim: the inputs' rows still leased under their (owner, generation, expiry) are locked,
 *    FOR UPDATE in id order (two batches never wait on each other in a cycle); an input whose
 *    lease is gone is `stale` and nothing of it is written. A job twice in one batch: the first
 *    input has it, the second is stale (as recorded one after the other).
 * 2. the message records (messages-tx.ts), the hard bounces' suppressions after the DNS-failure
 *    threshold (suppressions-tx.ts), in input order;
 * 3. the jobs' rows: requeued ones updated, finished ones moved to finished_jobs; the messages'
 *    open-job counts (messages-tx.ts closeMessageJobs); the events last (event-log.ts), which
 *    holds the event log's lock only from there to COMMIT.
 *
 * Atomic across nodes: the claim's row locks are held to COMMIT; a concurrent outcome, release,
 * recovery or drop of the same job waits, then re-checks its condition on the committed row and
 * finds the lease gone. The writes of step 3 touch only claimed rows.
 */
import { attemptEvents, outcomeLists, planAttempt, type AttemptPlan, type DeliveryEventDraft } from '../../domain/attempt-outcome.js';
import type { DeliveryJob } from '../../domain/types.js';
import type { RecordedOutcome, RecordOutcomeInput } from '../port/queue.js';
import type { Tx } from './client.js';
import type { PgContext } from './context.js';
import { appendEvents } from './event-log.js';
import { leaseTokens } from './lease-fence.js';
import { closeMessageJobs, messageRecords } from './messages-tx.js';
import { jsonb } from './queue-rows.js';
import { suppressHardBounces, type AttemptBounces } from './suppressions-tx.js';

interface Claimed {
  input: RecordOutcomeInput;
  plan: AttemptPlan;
  at: string;
}

export async function recordOutcomes(ctx: PgContext, inputs: readonly RecordOutcomeInput[]): Promise<RecordedOutcome[]> {
  if (inputs.length === 0) return [];
  return ctx.begin(async (tx) => {
    const held = await claimLeases(tx, inputs);
    const claimed: (Claimed | undefined)[] = inputs.map((input) => {
      const doc = held.get(input.job.id);
      if (!doc) return undefined;
      held.delete(input.job.id); // a second input for the same lease finds it taken
      const at = input.attemptAt.toISOString();
      return { input, at, plan: planAttempt(doc, input.result, at, input.nextDueAtMs) };
    });
    const live = claimed.filter((c): c is Claimed => c !== undefined);
    const suppressed = await writeOutcomes(tx, live);
    return claimed.map((c, i): RecordedOutcome =>
      c
        ? { ...outcomeLists(c.plan), status: c.plan.requeued ? 'requeued' : 'done', attempt: c.plan.attempt, suppressed: suppressed.get(c) ?? [] }
        : { status: 'stale', attempt: inputs[i].job.attempts + 1, delivered: [], bounced: [], deferred: [], expired: [], suppressed: [] },
    );
  });
}

/** The inputs' jobs still leased under their tokens, locked; id → the job as stored (doc). */
async function claimLeases(tx: Tx, inputs: readonly RecordOutcomeInput[]): Promise<Map<string, DeliveryJob>> {
  const t = leaseTokens(inputs.map((i) => i.job));
  const rows = await tx<{ id: string; doc: DeliveryJob }[]>`
    SELECT j.id, j.doc FROM jobs j
    JOIN unnest(${t.ids}::text[], ${t.owners}::text[], ${t.gens}::int4[], ${t.untils}::int8[]) AS f(id, owner, gen, until_ms)
      ON j.id = f.id AND j.lease_owner = f.owner AND j.lease_generation = f.gen AND j.lease_until = f.until_ms
    WHERE j.state = 'leased'
    ORDER BY j.id
    FOR UPDATE OF j`;
  return new Map(rows.map((r) => [r.id, r.doc]));
}

/** Steps 2 and 3 of the header for the claimed inputs; resolves with the addresses each suppressed. */
async function writeOutcomes(tx: Tx, live: readonly Claimed[]): Promise<Map<Claimed, string[]>> {
  const suppressedBy = new Map<Claimed, string[]>();
  if (live.length === 0) return suppressedBy;
  const messages = await messageRecords(tx, [...new Set(live.map((c) => c.input.job.messageId))]);
  const withMessage = live.filter((c) => messages.has(c.input.job.messageId));
  const attempts: AttemptBounces[] = withMessage.map((c) => {
    const m = messages.get(c.input.job.messageId)!;
    return { accountId: m.accountId, channelId: m.channelId, mailType: m.mailType, domain: c.input.job.domain, atMs: c.input.attemptAt.getTime(), bounced: c.plan.bounced };
  });
  const suppressed = await suppressHardBounces(tx, attempts);
  withMessage.forEach((c, i) => suppressedBy.set(c, suppressed[i]));

  await writeJobs(tx, live.map((c) => c.plan));
  const closes = withMessage.filter((c) => !c.plan.requeued).map((c) => ({ messageId: c.input.job.messageId, jobs: 1, at: c.at }));
  await closeMessageJobs(tx, closes);
  const events: DeliveryEventDraft[] = withMessage.flatMap((c) => attemptEvents(messages.get(c.input.job.messageId)!, c.plan, c.input.result, c.at));
  await appendEvents(tx, events);
  return suppressedBy;
}

/**
 * The claimed jobs afterwards: requeued rows updated in place, finished ones moved to
 * finished_jobs (docs hold no lease bookkeeping: the generation stays in its column).
 */
async function writeJobs(tx: Tx, plans: readonly AttemptPlan[]): Promise<void> {
  const requeued = plans.filter((p) => p.requeued).map((p) => ({ id: p.next.id, dueMs: Date.parse(p.next.dueAt), doc: p.next }));
  const done = plans.filter((p) => !p.requeued).map((p) => p.next);
  if (requeued.length > 0) {
    await tx`
      UPDATE jobs j SET state = 'queued', due_at = (u->>'dueMs')::int8, lease_until = NULL, lease_owner = NULL, doc = u->'doc'
      FROM jsonb_array_elements(${jsonb(tx, requeued)}::jsonb) AS u
      WHERE j.id = u->>'id'`;
  }
  if (done.length > 0) {
    await tx`
      WITH gone AS (DELETE FROM jobs WHERE id = ANY(${done.map((d) => d.id)}::text[]))
      INSERT INTO finished_jobs (id, message_id, account_id, channel_id, doc)
      SELECT d->>'id', d->>'messageId', d->>'accountId', d->>'channelId', d FROM jsonb_array_elements(${jsonb(tx, done)}::jsonb) AS d`;
  }
}
