/**
 * The writing verbs of the PostgreSQL engine's channels (store/port/channels.ts): create under
 * the per-account limit, update, and the deletion with everything that goes in its commit.
 */
import { randomUUID } from 'node:crypto';
import { AppError } from '../../domain/errors.js';
import type { Channel } from '../../domain/types.js';
import type { ChannelPatch, NewChannel } from '../port/channels.js';
import { lockAccount, revokeChannelKeys } from './accounts-tx.js';
import { channelDeletedTopic, schedulePurge } from './channels-tx.js';
import type { PgContext } from './context.js';
import { unlinkChannelFromDomains } from './domains-links.js';
import { removeChannelSuppressions } from './suppressions-tx.js';
import { removeChannelWebhooks } from './webhooks-tx.js';
import { removeChannelRoutes } from './inbound-routes-tx.js';
import { unlinkChannelFromTemplates } from './templates-tx.js';

/**
 * Atomic across nodes: the account's row is locked (lockAccount) before its live channels are
 * counted, so concurrent creations count one after the other and the insert commits with the
 * lock held: the limit is never exceeded.
 */
export async function createChannel(ctx: PgContext, input: NewChannel): Promise<Channel> {
  const at = new Date();
  const channel: Channel = {
    id: randomUUID(),
    accountId: input.accountId,
    name: input.name,
    deliveryType: input.deliveryType,
    tracking: { ...input.tracking },
    ...(input.ipPool !== undefined ? { ipPool: input.ipPool } : {}),
    createdAt: at.toISOString(),
    updatedAt: at.toISOString(),
  };
  await ctx.begin(async (tx) => {
    await lockAccount(tx, input.accountId);
    const [{ n }] = await tx<{ n: number }[]>`
      SELECT count(*)::int8 AS n FROM channels WHERE account_id = ${input.accountId} AND deleted_at_ms IS NULL`;
    if (n >= input.maxPerAccount) throw new AppError('resource_limit_exceeded', `An account may have at most ${input.maxPerAccount} channels`);
    await tx`
      INSERT INTO channels (id, account_id, name_lc, delivery_type, created_at_ms, doc)
      VALUES (${channel.id}, ${channel.accountId}, ${channel.name.toLowerCase()}, ${channel.deliveryType}, ${at.getTime()}, ${tx.json(channel)})`;
  });
  return channel;
}

/**
 * One conditional UPDATE … WHERE id AND live RETURNING (the port's rule): the patch's fields
 * replace the record's, tracking is merged key by key.
 */
export async function updateChannel(ctx: PgContext, id: string, patch: ChannelPatch): Promise<Channel | undefined> {
  const { sql } = ctx;
  const top = {
    ...(patch.name !== undefined ? { name: patch.name } : {}),
    ...(patch.deliveryType !== undefined ? { deliveryType: patch.deliveryType } : {}),
    ...(typeof patch.ipPool === 'string' ? { ipPool: patch.ipPool } : {}),
    updatedAt: new Date().toISOString(),
  };
  const [row] = await sql<{ doc: Channel }[]>`
    UPDATE channels SET
      doc = (CASE WHEN ${patch.ipPool === null} THEN doc - 'ipPool' ELSE doc END) || ${sql.json(top)} || jsonb_build_object('tracking', (doc->'tracking') || ${sql.json({ ...patch.tracking })}),
      name_lc = coalesce(${patch.name?.toLowerCase() ?? null}::text, name_lc),
      delivery_type = coalesce(${patch.deliveryType ?? null}::text, delivery_type)
    WHERE id = ${id} AND deleted_at_ms IS NULL
    RETURNING doc`;
  return row?.doc;
}

/**
 * One commit: the tombstone (a conditional UPDATE of the live row: of racing deletes exactly one
 * changes it, the others wait for its lock and then find it deleted), the channel's API keys,
 * suppressions, domain links and webhooks, the pending purge, and the NOTIFY that tells the
 * other nodes. Writers that add the channel's data hold its row FOR SHARE (lockLiveChannel), so
 * the UPDATE waits for them and they see the tombstone after it.
 */
export async function deleteChannel(ctx: PgContext, id: string): Promise<boolean> {
  const at = new Date();
  const iso = at.toISOString();
  const deleted = await ctx.begin(async (tx) => {
    const [row] = await tx<{ account_id: string }[]>`
      UPDATE channels SET deleted_at_ms = ${at.getTime()}, doc = doc || ${tx.json({ updatedAt: iso, deletedAt: iso })}
      WHERE id = ${id} AND deleted_at_ms IS NULL
      RETURNING account_id`;
    if (!row) return false;
    await revokeChannelKeys(tx, id, at.getTime());
    await removeChannelSuppressions(tx, id);
    await unlinkChannelFromDomains(tx, row.account_id, id, iso);
    await removeChannelWebhooks(tx, id);
    await removeChannelRoutes(tx, id);
    await unlinkChannelFromTemplates(tx, row.account_id, id, iso);
    await schedulePurge(tx, { channelId: id, accountId: row.account_id, deletedAtMs: at.getTime() });
    await tx`SELECT pg_notify(${channelDeletedTopic(ctx.schema)}, ${id})`;
    return true;
  });
  // This node knows at once (QueuePort.channelDeleted answers in the same turn); the others by the NOTIFY.
  if (deleted) ctx.deletedChannels.add(id);
  return deleted;
}
