/**
 * WebhooksPort over PostgreSQL (store/port/webhooks.ts), the behaviour of LMDB's webhooks.ts:
 * the record in webhooks.doc, its signing key beside it, its status in webhook_status, its
 * deliveries in webhook_outbox (schema/webhooks-idempotency.ts).
 *
 * No "account has no webhooks" cache (the port allows one if every node invalidates it): the
 * look-up it would save is one index probe (webhooks-tx.ts).
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { AppError } from '../../../domain/errors.js';
import { EMPTY_STATUS, patchedWebhook, type Webhook, type WebhookStatus } from '../../../domain/webhook.js';
import type { NewWebhook, NewWebhookInput, WebhookFilter, WebhookPatch, WebhooksPort } from '../../port/webhooks.js';
import type { PgContext } from '../context.js';
import { removeWebhooks } from '../webhooks-tx.js';

const SECRET_PREFIX = 'whsec_';

function newSecret(): string {
  return SECRET_PREFIX + randomBytes(32).toString('base64url');
}

export function pgWebhooks(ctx: PgContext): WebhooksPort {
  const { sql } = ctx;
  return {
    create: (input) => createWebhook(ctx, input),

    async get(id) {
      const [row] = await sql<{ doc: Webhook }[]>`SELECT doc FROM webhooks WHERE id = ${id}`;
      return row?.doc;
    },

    async signingKey(id) {
      const [row] = await sql<{ signing_key: string }[]>`SELECT signing_key FROM webhooks WHERE id = ${id}`;
      return row?.signing_key ?? null;
    },

    async status(id) {
      const [row] = await sql<{ doc: WebhookStatus }[]>`SELECT doc FROM webhook_status WHERE webhook_id = ${id}`;
      return { ...EMPTY_STATUS, ...row?.doc };
    },

    list: (f) => listWebhooks(ctx, f),
    update: (id, patch) => updateWebhook(ctx, id, patch),

    /** One conditional UPDATE: the new key replaces the old at once, or nothing when the webhook is gone. */
    async regenerateSigningKey(id) {
      const signingKey = newSecret();
      const updatedAt = new Date().toISOString();
      const [row] = await ctx.begin(
        (tx) => tx<{ doc: Webhook }[]>`
          UPDATE webhooks SET signing_key = ${signingKey}, doc = jsonb_set(doc, '{updatedAt}', to_jsonb(${updatedAt}::text))
          WHERE id = ${id} RETURNING doc`,
      );
      return row ? { webhook: row.doc, signingKey } : undefined;
    },

    async delete(id) {
      return (await ctx.begin((tx) => removeWebhooks(tx, { id }))) > 0;
    },
  };
}

/**
 * Counting and inserting are atomic across nodes: the first statement locks the account's row
 * of webhook_accounts (ON CONFLICT DO UPDATE locks an existing row; a new row is locked by its
 * uncommitted insert, a racing insert waiting for it), so concurrent creates of one account run
 * one after the other, and each count (a new snapshot, READ COMMITTED) sees every earlier commit.
 */
async function createWebhook(ctx: PgContext, input: NewWebhookInput): Promise<NewWebhook> {
  const now = new Date();
  const { maxPerAccount, ...fields } = input;
  const webhook: Webhook = { id: randomUUID(), ...fields, createdAt: now.toISOString(), updatedAt: now.toISOString() };
  const signingKey = newSecret();
  await ctx.begin(async (tx) => {
    await tx`
      INSERT INTO webhook_accounts (account_id) VALUES (${webhook.accountId})
      ON CONFLICT (account_id) DO UPDATE SET account_id = excluded.account_id`;
    const [{ n }] = await tx<{ n: number }[]>`SELECT count(*)::int8 AS n FROM webhooks WHERE account_id = ${webhook.accountId}`;
    if (n >= maxPerAccount) throw new AppError('resource_limit_exceeded', `An account may have at most ${maxPerAccount} webhooks`);
    await tx`
      WITH w AS (
        INSERT INTO webhooks (id, account_id, channel_id, created_at_ms, enabled, signing_key, doc)
        VALUES (${webhook.id}, ${webhook.accountId}, ${webhook.channelId}, ${now.getTime()}, ${webhook.enabled}, ${signingKey}, ${tx.json(webhook as never)})
      )
      INSERT INTO webhook_status (webhook_id, doc) VALUES (${webhook.id}, ${tx.json(EMPTY_STATUS as never)})`;
  });
  return { webhook, signingKey };
}

/** One statement: the page and the number of matches, in creation order (LMDB's accountWebhooks key). */
async function listWebhooks(ctx: PgContext, f: WebhookFilter): Promise<{ results: Webhook[]; totalCount: number }> {
  const { sql } = ctx;
  const [row] = await sql<{ total: number; results: Webhook[] }[]>`
    WITH m AS (
      SELECT doc, created_at_ms, id FROM webhooks
      WHERE account_id = ${f.accountId} ${f.channelIds ? sql`AND channel_id = ANY(${f.channelIds}::text[])` : sql``}
    )
    SELECT (SELECT count(*) FROM m)::int8 AS total,
      (SELECT coalesce(jsonb_agg(p.doc ORDER BY p.created_at_ms, p.id), '[]'::jsonb)
       FROM (SELECT doc, created_at_ms, id FROM m ORDER BY created_at_ms, id LIMIT ${f.limit} OFFSET ${f.offset}) p) AS results`;
  return { results: row.results, totalCount: row.total };
}

/**
 * A read-modify-write under the row lock (FOR NO KEY UPDATE): concurrent updates of one webhook
 * apply one after the other. Disabling drops what was queued, in the same commit (LMDB's
 * updateWebhook); an entry an event appended concurrently from the older record is dropped by the
 * next claim (a disabled webhook receives nothing).
 */
async function updateWebhook(ctx: PgContext, id: string, patch: WebhookPatch): Promise<Webhook | undefined> {
  return ctx.begin(async (tx) => {
    const [row] = await tx<{ doc: Webhook }[]>`SELECT doc FROM webhooks WHERE id = ${id} FOR NO KEY UPDATE`;
    if (!row) return undefined;
    const w = row.doc;
    const next = patchedWebhook(w, patch, new Date());
    await tx`UPDATE webhooks SET channel_id = ${next.channelId}, enabled = ${next.enabled}, doc = ${tx.json(next as never)} WHERE id = ${id}`;
    if (w.enabled && !next.enabled) await tx`DELETE FROM webhook_outbox WHERE webhook_id = ${id}`;
    return next;
  });
}
