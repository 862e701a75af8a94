/**
 * The reading verbs of the PostgreSQL engine's sending domains (store/port/domains.ts).
 *
 * No cache: findSending and signingKey run several times per message on the intake paths, each
 * one indexed statement (the unique (account_id, name) index, the dkim_keys primary key), so
 * every node sees every committed write at its next read without any invalidation (the port's
 * caching rule). Records are frozen: the port lets readers share them.
 */
import { deepFreeze } from '../../domain/deep-freeze.js';
import { asciiNeedleOf, lookupDomainName } from '../../domain/domain-name.js';
import { signingCompanion, type SendingDomain } from '../../domain/sending-domain.js';
import type { DomainFilter, SendingDomainMatch, SigningKey } from '../port/domains.js';
import type { PgContext } from './context.js';

type Row = { doc: SendingDomain };

export async function getDomain(ctx: PgContext, id: string): Promise<SendingDomain | undefined> {
  const [row] = await ctx.sql<Row[]>`SELECT doc FROM domains WHERE id = ${id}`;
  return row && deepFreeze(row.doc);
}

export async function findDomainByName(ctx: PgContext, accountId: string, name: string): Promise<SendingDomain | undefined> {
  const [row] = await ctx.sql<Row[]>`SELECT doc FROM domains WHERE account_id = ${accountId} AND name = ${name}`;
  return row && deepFreeze(row.doc);
}

export async function countDomains(ctx: PgContext, accountId: string): Promise<number> {
  const [row] = await ctx.sql<{ n: number }[]>`SELECT count(*)::int8 AS n FROM domains WHERE account_id = ${accountId}`;
  return row.n;
}

/** Oldest first (created_at_ms, then id), one page and the total, in one statement over the account's index. */
export async function listDomains(ctx: PgContext, f: DomainFilter): Promise<{ results: SendingDomain[]; totalCount: number }> {
  const { sql } = ctx;
  const needle = f.name?.toLowerCase();
  const ascii = needle ? asciiNeedleOf(needle) : undefined;
  const [row] = await sql<{ total: number; results: SendingDomain[] }[]>`
    WITH m AS (
      SELECT doc, created_at_ms, id FROM domains
      WHERE account_id = ${f.accountId}
        ${needle ? sql`AND (strpos(name, ${needle}) > 0 ${ascii ? sql`OR strpos(name, ${ascii}) > 0` : sql``})` : sql``}
        ${f.channelIds ? sql`AND doc->'channelIds' ?| ${f.channelIds}::text[]` : sql``}
    )
    SELECT (SELECT count(*) FROM m)::int8 AS total,
      coalesce((SELECT jsonb_agg(p.doc ORDER BY p.created_at_ms, p.id)
        FROM (SELECT doc, created_at_ms, id FROM m ORDER BY created_at_ms, id LIMIT ${f.limit} OFFSET ${f.offset}) p), '[]'::jsonb) AS results`;
  return { results: row.results.map((d) => deepFreeze(d)), totalCount: row.total };
}

export async function dkimSelectors(ctx: PgContext, id: string): Promise<string[]> {
  const rows = await ctx.sql<{ selector: string }[]>`SELECT selector FROM dkim_keys WHERE domain_id = ${id} ORDER BY selector`;
  return rows.map((r) => r.selector);
}

/**
 * The account's domain of that name, linked to the channel, while the channel is live; with
 * whether the active key's private key is stored (read without reading the key). One statement.
 */
export async function findSending(ctx: PgContext, q: { accountId: string; channelId: string; domainName: string }): Promise<SendingDomainMatch | undefined> {
  const [row] = await ctx.sql<{ doc: SendingDomain; stored: boolean }[]>`
    SELECT d.doc,
      EXISTS (SELECT 1 FROM dkim_keys k WHERE k.domain_id = d.id AND k.selector = d.doc->'activeKey'->>'selector') AS stored
    FROM domains d
    JOIN channels c ON c.id = ${q.channelId} AND c.deleted_at_ms IS NULL
    WHERE d.account_id = ${q.accountId} AND d.name = ${lookupDomainName(q.domainName)}
      AND d.doc->'channelIds' @> jsonb_build_array(${q.channelId}::text)`;
  return row && { domain: deepFreeze(row.doc), activeKeyStored: row.stored };
}

/** The active key's private key, and its companion's while the companion's record is verified. One statement. */
export async function signingKey(ctx: PgContext, q: { accountId: string; domainName: string }): Promise<SigningKey | undefined> {
  const [row] = await ctx.sql<{ doc: SendingDomain; pem: string | null; companion_pem: string | null }[]>`
    SELECT d.doc, k.private_key_pem AS pem, c.private_key_pem AS companion_pem
    FROM domains d
    LEFT JOIN dkim_keys k ON k.domain_id = d.id AND k.selector = d.doc->'activeKey'->>'selector'
    LEFT JOIN dkim_keys c ON c.domain_id = d.id AND c.selector = d.doc->'activeKey'->'rsaCompanion'->>'selector'
    WHERE d.account_id = ${q.accountId} AND d.name = ${lookupDomainName(q.domainName)}`;
  if (!row || row.pem === null) return undefined;
  const active = row.doc.activeKey;
  const signing: SigningKey = { domain: row.doc.name, selector: active.selector, algorithm: active.algorithm, privateKeyPem: row.pem };
  const companion = signingCompanion(active);
  if (companion && row.companion_pem !== null) signing.rsaCompanion = { selector: companion.selector, algorithm: 'rsa', privateKeyPem: row.companion_pem };
  return signing;
}

/** The partial index of the domains the re-check watches, in id order. */
export async function toRecheck(ctx: PgContext): Promise<string[]> {
  const rows = await ctx.sql<{ id: string }[]>`SELECT id FROM domains WHERE recheck ORDER BY id`;
  return rows.map((r) => r.id);
}
