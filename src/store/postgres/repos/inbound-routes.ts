/**
 * InboundRoutesPort over PostgreSQL (store/port/inbound-routes.ts), the behaviour of LMDB's
 * inbound-routes.ts: the record in inbound_routes.doc, its signing key beside it
 * (schema/inbound.ts).
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { AppError } from '../../../domain/errors.js';
import {
  addressTaken,
  firstMatch,
  matchCandidates,
  patchedRoute,
  routeLimitExceeded,
  unknownRouteDomain,
  type InboundRoute,
  type RouteMatch,
} from '../../../domain/inbound-route.js';
import type { InboundRouteFilter, InboundRoutesPort, NewInboundRouteInput, RouteWithKey } from '../../port/inbound-routes.js';
import { lockAccount } from '../accounts-tx.js';
import { lockLiveChannels } from '../channels-tx.js';
import type { Tx } from '../client.js';
import { sqlState, type PgContext } from '../context.js';

/** The same form as webhooks' keys: receivers verify both with one function. */
function newSecret(): string {
  return 'whsec_' + randomBytes(32).toString('base64url');
}

export function pgInboundRoutes(ctx: PgContext): InboundRoutesPort {
  const { sql } = ctx;
  return {
    create: (input) => createRoute(ctx, input),

    async get(id) {
      const [row] = await sql<{ doc: InboundRoute }[]>`SELECT doc FROM inbound_routes WHERE id = ${id}`;
      return row?.doc;
    },

    async signingKey(id) {
      const [row] = await sql<{ signing_key: string }[]>`SELECT signing_key FROM inbound_routes WHERE id = ${id}`;
      return row?.signing_key ?? null;
    },

    list: (f) => listRoutes(ctx, f),

    /** Under the row lock; a new channel is locked FOR SHARE as live (the channel delete waits, or this sees its tombstone). */
    update: (id, patch) =>
      ctx.begin(async (tx) => {
        const [row] = await tx<{ doc: InboundRoute }[]>`SELECT doc FROM inbound_routes WHERE id = ${id} FOR NO KEY UPDATE`;
        if (!row) return undefined;
        if (patch.channelId !== undefined && patch.channelId !== row.doc.channelId) await assertLiveChannel(tx, row.doc.accountId, patch.channelId);
        const next = patchedRoute(row.doc, patch, new Date());
        await tx`UPDATE inbound_routes SET channel_id = ${next.channelId}, doc = ${tx.json(next as never)} WHERE id = ${id}`;
        return next;
      }),

    /** One conditional UPDATE: the new key replaces the old at once, or nothing when the route is gone. */
    async regenerateSigningKey(id) {
      const signingKey = newSecret();
      const updatedAt = new Date().toISOString();
      const [row] = await ctx.begin(
        (tx) => tx<{ doc: InboundRoute }[]>`
          UPDATE inbound_routes SET signing_key = ${signingKey}, doc = jsonb_set(doc, '{updatedAt}', to_jsonb(${updatedAt}::text))
          WHERE id = ${id} RETURNING doc`,
      );
      return row ? { route: row.doc, signingKey } : undefined;
    },

    async delete(id) {
      return (await ctx.begin((tx) => tx`DELETE FROM inbound_routes WHERE id = ${id} RETURNING id`)).length > 0;
    },

    async anyOnDomain(domainId) {
      return (await sql`SELECT 1 FROM inbound_routes WHERE domain_id = ${domainId} LIMIT 1`).length > 0;
    },

    match: (recipient) => matchRoute(ctx, recipient),

    oldestEnabledOnDomain: (domain) => oldestEnabledRoute(ctx, domain),
  };
}

/** One statement for every candidate; the most specific found wins (matchCandidates' order). */
async function matchRoute({ sql }: PgContext, recipient: string): Promise<RouteMatch | undefined> {
  const candidates = matchCandidates(recipient);
  if (candidates.length === 0) return undefined;
  const rows = await sql<{ address: string; doc: InboundRoute }[]>`
    SELECT address, doc FROM inbound_routes WHERE address = ANY(${candidates.map((c) => c.address)}::text[])`;
  const found = new Map(rows.map((r) => [r.address, r.doc]));
  return firstMatch(candidates, (address) => found.get(address));
}

/** The first row of inbound_routes_domain_enabled (migration 9): the expression and the predicate as the index has them. */
async function oldestEnabledRoute({ sql }: PgContext, domain: string): Promise<InboundRoute | undefined> {
  const [row] = await sql<{ doc: InboundRoute }[]>`
    SELECT doc FROM inbound_routes WHERE split_part(address, '@', 2) = ${domain} AND doc->>'enabled' = 'true'
    ORDER BY created_at_ms, id LIMIT 1`;
  return row?.doc;
}

async function assertLiveChannel(tx: Tx, accountId: string, channelId: string): Promise<void> {
  if (!(await lockLiveChannels(tx, [channelId], accountId)).has(channelId)) throw new AppError('channel_not_found', `Channel ${channelId} does not exist`);
}

/**
 * Atomic across nodes, refusing in the port's order: the account's row is locked first
 * (lockAccount), so the count and the address check see every create that committed before;
 * the channel and then the domain are held FOR SHARE until the commit (the order the channel
 * delete takes them in, so the two never deadlock): a delete of either waits for this commit and
 * removes the route, or this sees it gone. The unique index on the address is the last word.
 */
async function createRoute(ctx: PgContext, input: NewInboundRouteInput): Promise<RouteWithKey> {
  const now = new Date();
  const { maxPerAccount, ...fields } = input;
  const route: InboundRoute = { id: randomUUID(), ...fields, createdAt: now.toISOString(), updatedAt: now.toISOString() };
  const signingKey = newSecret();
  try {
    await ctx.begin(async (tx) => {
      await lockAccount(tx, route.accountId);
      const [{ n }] = await tx<{ n: number }[]>`SELECT count(*)::int8 AS n FROM inbound_routes WHERE account_id = ${route.accountId}`;
      if (n >= maxPerAccount) throw routeLimitExceeded(maxPerAccount);
      if ((await tx`SELECT 1 FROM inbound_routes WHERE address = ${route.address}`).length > 0) throw addressTaken(route.address);
      await assertLiveChannel(tx, route.accountId, route.channelId);
      const domain = await tx`SELECT 1 FROM domains WHERE id = ${route.domainId} AND account_id = ${route.accountId} FOR SHARE`;
      if (domain.length === 0) throw unknownRouteDomain(route.address.slice(route.address.lastIndexOf('@') + 1));
      await tx`
        INSERT INTO inbound_routes (id, account_id, channel_id, domain_id, address, created_at_ms, signing_key, doc)
        VALUES (${route.id}, ${route.accountId}, ${route.channelId}, ${route.domainId}, ${route.address}, ${now.getTime()}, ${signingKey}, ${tx.json(route as never)})`;
    });
  } catch (err) {
    if (sqlState(err) === '23505') throw addressTaken(route.address);
    throw err;
  }
  return { route, signingKey };
}

/** One statement: the page and the number of matches, in creation order (LMDB's index key order). */
async function listRoutes(ctx: PgContext, f: InboundRouteFilter): Promise<{ results: InboundRoute[]; totalCount: number }> {
  const { sql } = ctx;
  const [row] = await sql<{ total: number; results: InboundRoute[] }[]>`
    WITH m AS (
      SELECT doc, created_at_ms, id FROM inbound_routes
      WHERE account_id = ${f.accountId} ${f.channelIds ? sql`AND channel_id = ANY(${f.channelIds}::text[])` : sql``}
    )
    SELECT (SELECT count(*) FROM m)::int8 AS total,
      (SELECT coalesce(jsonb_agg(p.doc ORDER BY p.created_at_ms, p.id), '[]'::jsonb)
       FROM (SELECT doc, created_at_ms, id FROM m ORDER BY created_at_ms, id LIMIT ${f.limit} OFFSET ${f.offset}) p) AS results`;
  return { results: row.results, totalCount: row.total };
}
