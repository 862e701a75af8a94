/**
 * The PostgreSQL engine's API keys (store/port/accounts.ts ApiKeysPort). Only the SHA-256 of a
 * token is stored (domain/secret-tokens.ts).
 *
 * findByToken runs on every request and SMTP AUTH: one probe of the unique index on the hash
 * (~0.1 ms), and no cache, so a revoke or a removal on any node is seen by the very next lookup
 * on every node (the port's rule) without an invalidation protocol.
 */
import { timingSafeEqual } from 'node:crypto';
import { AppError } from '../../../domain/errors.js';
import { hashToken, mayBeApiKeyToken, newApiKey } from '../../../domain/secret-tokens.js';
import type { ApiKey } from '../../../domain/types.js';
import { lockAccount } from '../accounts-tx.js';
import type { Tx } from '../client.js';
import type { PgContext } from '../context.js';
import type { ApiKeysPort, NewApiKey, RevokeLiveOutcome } from '../../port/accounts.js';

type Row = { doc: ApiKey };

export function pgApiKeys(ctx: PgContext): ApiKeysPort {
  const { sql } = ctx;
  return {
    create: (input) => createKey(ctx, input),

    findByToken: (token) => findByToken(ctx, token),

    async get(id: string): Promise<ApiKey | undefined> {
      const [row] = await sql<Row[]>`SELECT doc FROM api_keys WHERE id = ${id}`;
      return row?.doc;
    },

    async listLive(accountId: string): Promise<ApiKey[]> {
      const rows = await sql<Row[]>`
        SELECT doc FROM api_keys WHERE account_id = ${accountId} AND revoked_at_ms IS NULL ORDER BY created_at_ms, id`;
      return rows.map((r) => r.doc);
    },

    /** The operator's list: a full read (few keys), in id order. */
    async list(filter: { accountId?: string; channelId?: string } = {}): Promise<ApiKey[]> {
      const rows = await sql<Row[]>`
        SELECT doc FROM api_keys
        WHERE true
          ${filter.accountId ? sql`AND account_id = ${filter.accountId}` : sql``}
          ${filter.channelId ? sql`AND channel_id = ${filter.channelId}` : sql``}
        ORDER BY id`;
      return rows.map((r) => r.doc);
    },

    /**
     * Idempotent: one conditional UPDATE revokes a live key (a concurrent revoke waits for the
     * row and then finds it revoked), and the key is read as it is when none was revoked now.
     */
    async revoke(id: string): Promise<ApiKey | undefined> {
      const [revoked] = await revokeIfLive(ctx, id);
      if (revoked) return revoked.doc;
      const [row] = await sql<Row[]>`SELECT doc FROM api_keys WHERE id = ${id}`;
      return row?.doc;
    },

    revokeLive: (input) => revokeLive(ctx, input),
  };
}

/** One probe of the unique index on the hash, live keys only. */
async function findByToken(ctx: PgContext, token: string): Promise<ApiKey | undefined> {
  if (!mayBeApiKeyToken(token)) return undefined;
  const hash = hashToken(token);
  const [row] = await ctx.sql<Row[]>`SELECT doc FROM api_keys WHERE hash = ${hash} AND revoked_at_ms IS NULL`;
  // Defence in depth: the index and the record must agree (constant-time compare).
  if (!row || !timingSafeEqual(Buffer.from(row.doc.hash, 'hex'), Buffer.from(hash, 'hex'))) return undefined;
  return row.doc;
}

/**
 * One conditional UPDATE … WHERE id AND account AND live RETURNING decides: of concurrent
 * revokes exactly one changes the row (the others wait for its lock, then see it revoked).
 * Only a refusal reads the key again, for its reason: a key goes from live to revoked or gone
 * only, so a refusal read after the update stays true.
 */
async function revokeLive(ctx: PgContext, input: { id: string; accountId: string }): Promise<RevokeLiveOutcome> {
  const [revoked] = await revokeIfLive(ctx, input.id, input.accountId);
  if (revoked) return { result: 'revoked', key: revoked.doc };
  const [row] = await ctx.sql<Row[]>`SELECT doc FROM api_keys WHERE id = ${input.id}`;
  if (!row || row.doc.revokedAt) return { result: 'not_found' };
  return row.doc.accountId !== input.accountId ? { result: 'forbidden' } : { result: 'not_found' };
}

/** Revokes the key when it is live (and the account's, when given): the row as revoked, or none. */
function revokeIfLive(ctx: PgContext, id: string, accountId?: string): Promise<Row[]> {
  const { sql } = ctx;
  const at = new Date();
  return sql<Row[]>`
    UPDATE api_keys SET revoked_at_ms = ${at.getTime()}, doc = doc || ${sql.json({ revokedAt: at.toISOString() })}
    WHERE id = ${id} AND revoked_at_ms IS NULL ${accountId === undefined ? sql`` : sql`AND account_id = ${accountId}`}
    RETURNING doc`;
}

/**
 * A channel's key is never stored for a deleted channel, even when the delete commits between
 * the caller's check of the channel and this verb: the channel's row is locked (FOR SHARE), so
 * a delete in progress is waited for and its tombstone seen, and a delete that comes later
 * removes this key with the channel's others (revokeChannelKeys). An id of no channel is not
 * refused (the port does not ask for one, as the LMDB engine).
 */
async function refuseDeletedChannel(tx: Tx, channelId: string): Promise<void> {
  const [row] = await tx<{ deleted: boolean }[]>`SELECT deleted_at_ms IS NOT NULL AS deleted FROM channels WHERE id = ${channelId} FOR SHARE`;
  if (row?.deleted) throw new AppError('channel_not_found', `No channel ${channelId}`);
}

/**
 * A new key. With a limit, atomic across nodes: the account's row is locked (lockAccount) before
 * its live keys are counted, so concurrent creations count one after the other and never exceed
 * it; the insert commits with the lock held.
 */
async function createKey(ctx: PgContext, input: { accountId: string; channelId: string | null; name?: string; maxPerAccount?: number }): Promise<NewApiKey> {
  const createdAt = new Date();
  const { key, token } = newApiKey(input, createdAt);
  const max = input.maxPerAccount;
  await ctx.begin(async (tx) => {
    // The account's row before the channel's, as domains' create takes them.
    if (max !== undefined) {
      await lockAccount(tx, input.accountId);
      const [{ n }] = await tx<{ n: number }[]>`SELECT count(*)::int8 AS n FROM api_keys WHERE account_id = ${input.accountId} AND revoked_at_ms IS NULL`;
      if (n >= max) throw new AppError('resource_limit_exceeded', `An account may have at most ${max} API keys; revoke one first`);
    }
    if (input.channelId !== null) await refuseDeletedChannel(tx, input.channelId);
    await tx`
      INSERT INTO api_keys (id, account_id, channel_id, hash, created_at_ms, doc)
      VALUES (${key.id}, ${key.accountId}, ${key.channelId}, ${key.hash}, ${createdAt.getTime()}, ${tx.json(key)})`;
  });
  return { key, token };
}
