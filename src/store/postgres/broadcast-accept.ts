/**
 * BroadcastsPort.accept: the record, its counters row, one row per entry, the pending account's
 * quota and the idempotency record, in one transaction (store/lmdb/broadcasts.ts acceptBroadcast).
 * The quota is a conditional upsert (send-quota.ts) and the idempotency record H4's
 * insert-if-absent: a racing accept that loses either rolls back whole.
 */
import type { BroadcastRecord } from '../port/broadcasts.js';
import type { IdempotencyWrite } from '../port/idempotency.js';
import type { Tx } from './client.js';
import type { PgContext } from './context.js';
import { jsonParam } from './broadcast-rows.js';
import { reserveSendQuota } from './send-quota.js';
import { putIdempotency } from './webhooks-tx.js';

/** Entries per INSERT: one jsonb array parameter each, so a large broadcast is a few statements. */
const ENTRIES_PER_INSERT = 5_000;

export interface AcceptInput<C, E> {
  record: BroadcastRecord<C>;
  entries: E[];
  sendLimit?: { accountId: string; limit: number; recipients: number };
  idempotency?: IdempotencyWrite;
}

export async function acceptBroadcast<C, E>(ctx: PgContext, input: AcceptInput<C, E>): Promise<void> {
  const b = input.record;
  await ctx.begin(async (tx) => {
    if (input.sendLimit) await reserveSendQuota(tx, input.sendLimit.accountId, input.sendLimit.recipients, input.sendLimit.limit);
    await tx`
      INSERT INTO broadcasts (id, account_id, channel_id, created_ms, state, doc)
      VALUES (${b.id}, ${b.accountId}, ${b.channelId}, ${Date.parse(b.createdAt)}, ${b.state}, ${jsonParam(tx, b)})`;
    await tx`INSERT INTO broadcast_counters (broadcast_id, account_id, channel_id) VALUES (${b.id}, ${b.accountId}, ${b.channelId})`;
    await insertEntries(tx, b, input.entries);
    if (input.idempotency) await putIdempotency(tx, input.idempotency);
  });
}

/** Entry i is row (id, i): the expander reads them in index order from its cursor. */
async function insertEntries(tx: Tx, b: BroadcastRecord<unknown>, entries: readonly unknown[]): Promise<void> {
  for (let start = 0; start < entries.length; start += ENTRIES_PER_INSERT) {
    const chunk = entries.slice(start, start + ENTRIES_PER_INSERT);
    await tx`
      INSERT INTO broadcast_entries (broadcast_id, idx, account_id, channel_id, entry)
      SELECT ${b.id}, (${start}::int4 + o::int4 - 1), ${b.accountId}, ${b.channelId}, e
      FROM jsonb_array_elements(${jsonParam(tx, chunk)}::jsonb) WITH ORDINALITY AS t(e, o)`;
  }
}
