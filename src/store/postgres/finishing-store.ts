/**
 * The finishing stage's writes of finished messages (MessagesPort.storeFinished,
 * recordFinishingTries), as the LMDB engine's signing.ts: finished bodies are stored, what
 * composition learned goes into the record, the wait ends and the held jobs become due (or, for
 * a sandbox message sent now, its simulated outcome is recorded), in one transaction.
 *
 * Exactly once across nodes: the waiting row's DELETE … RETURNING decides. Of two stages storing
 * one message at once (a takeover's window), the second's DELETE waits for the first's row lock,
 * then finds the row gone and stores nothing (READ COMMITTED re-checks the row after the wait).
 */
import type { MessageRecord } from '../../domain/types.js';
import type { FinishedMessage, FinishingTries } from '../port/messages.js';
import type { Tx } from './client.js';
import type { PgContext } from './context.js';
import { jsonParam } from './broadcast-rows.js';
import { makeMessagesDue } from './queue-tx.js';
import { appendEvents } from './event-log.js';
import { addSuppressions } from './suppressions-tx.js';
import { finishedSimulation } from '../../domain/sandbox-outcome.js';

interface Ended {
  id: string;
  composed: boolean;
  channel_id: string | null;
  /** The record, when it waits for its simulated outcome (a sandbox message sent now; domain/sandbox-outcome.ts). */
  simulate: MessageRecord | null;
  has_body: boolean;
  /** The channel's tombstone is committed (read in the same statement: no round trip per message). */
  channel_deleted: boolean;
}

/** Returns how many jobs became due. */
export async function storeFinished(ctx: PgContext, items: readonly FinishedMessage[]): Promise<number> {
  // A message finished twice in one call is stored once: the first.
  const byId = new Map<string, FinishedMessage>();
  for (const s of items) if (!byId.has(s.messageId)) byId.set(s.messageId, s);
  if (byId.size === 0) return 0;
  return ctx.begin(async (tx) => {
    const ended = await tx<Ended[]>`
      WITH gone AS (DELETE FROM unfinished_messages WHERE message_id = ANY(${[...byId.keys()]}::text[]) RETURNING message_id)
      SELECT g.message_id AS id, m.channel_id, CASE WHEN m.doc ? 'simulateWhenFinished' THEN m.doc END AS simulate,
        EXISTS (SELECT 1 FROM message_bodies b WHERE b.message_id = g.message_id) AS has_body,
        EXISTS (SELECT 1 FROM channels c WHERE c.id = m.channel_id AND c.deleted_at_ms IS NOT NULL) AS channel_deleted
      FROM gone g LEFT JOIN messages m ON m.id = g.message_id`;
    const kept: FinishedMessage[] = [];
    const simulated: MessageRecord[] = [];
    for (const e of ended) {
      const s = byId.get(e.id)!;
      // The message went, or was finished while its channel was being deleted: nothing is stored, no job becomes due.
      if (e.channel_id === null || e.channel_deleted) continue;
      // Signing a committed body that retention or a purge removed meanwhile: nothing to store.
      if (!s.composed && !e.has_body) continue;
      kept.push(s);
      if (e.simulate) simulated.push(e.simulate);
    }
    if (kept.length === 0) return 0;
    await putBodies(tx, kept);
    // Jobs before the records: every writer takes a message's jobs before its record (no lock cycle).
    const released = await makeMessagesDue(tx, kept.map((s) => s.messageId));
    await patchRecords(tx, kept);
    await recordSimulations(tx, simulated);
    return released;
  });
}

/**
 * Sandbox messages sent now, finished: their simulated outcomes are recorded now, not at their
 * commit (submission-plan.ts), and their records no longer wait for them: they are finished now.
 * The events last (event-log.ts).
 */
async function recordSimulations(tx: Tx, records: readonly MessageRecord[]): Promise<void> {
  if (records.length === 0) return;
  const ts = new Date();
  const outcomes = records.map((r) => ({ r, ...finishedSimulation(r, ts.toISOString()) }));
  const adds = outcomes.flatMap((o) => o.suppress.map((email) => ({ channelId: o.r.channelId, mailType: o.r.mailType, email, reason: 'bounce' as const })));
  if (adds.length > 0) await addSuppressions(tx, adds, ts);
  await tx`
    UPDATE messages SET doc = (doc - 'simulateWhenFinished') || jsonb_build_object('finishedAt', ${ts.toISOString()}::text)
    WHERE id = ANY(${records.map((r) => r.id)}::text[])`;
  await appendEvents(tx, outcomes.flatMap((o) => o.events));
}

async function putBodies(tx: Tx, kept: readonly FinishedMessage[]): Promise<void> {
  const ids = kept.map((s) => s.messageId);
  const bodies = kept.map((s) => Buffer.from(s.body.buffer, s.body.byteOffset, s.body.byteLength));
  await tx`
    INSERT INTO message_bodies (message_id, account_id, channel_id, body)
    SELECT m.id, m.account_id, m.channel_id, u.body
    FROM unnest(${ids}::text[], ${bodies}::bytea[]) AS u(id, body) JOIN messages m ON m.id = u.id
    ON CONFLICT (message_id) DO UPDATE SET body = EXCLUDED.body`;
}

/** What composition learned (the rendered parts, the size) goes into the record. */
async function patchRecords(tx: Tx, kept: readonly FinishedMessage[]): Promise<void> {
  const patches = kept.filter((s) => s.record && Object.keys(s.record).length > 0);
  if (patches.length === 0) return;
  const rows = patches.map((s) => ({ id: s.messageId, patch: s.record as Partial<MessageRecord> }));
  await tx`
    UPDATE messages m SET doc = m.doc || p.patch
    FROM jsonb_to_recordset(${jsonParam(tx, rows)}::jsonb) AS p(id text, patch jsonb)
    WHERE m.id = p.id`;
}

/** A failed try, kept in the waiting entry; nothing when the message no longer waits. One UPDATE. */
export async function recordFinishingTries(ctx: PgContext, id: string, tries: FinishingTries): Promise<void> {
  await ctx.begin(async (tx) => {
    await tx`UPDATE unfinished_messages SET failures = ${jsonParam(tx, tries)} WHERE message_id = ${id}`;
  });
}
