/**
 * TemplatesPort over PostgreSQL (store/port/templates.ts), the behaviour of LMDB's templates.ts:
 * the record in templates.doc, each version a row of template_versions (schema/templates.ts).
 * Writes lock the account's row (create) or the template's row (update, activate), so the limits
 * and the alias are decided by one transaction at a time; the unique index is the last word.
 */
import { randomUUID } from 'node:crypto';
import { AppError } from '../../../domain/errors.js';
import {
  aliasTaken,
  newStoredTemplate,
  patchedTemplate,
  templateLimitExceeded,
  unknownVersion,
  versionLimitExceeded,
  versionOf,
  type StoredTemplate,
  type TemplateVersion,
  type TemplateWithVersion,
} from '../../../domain/template.js';
import { isUuid } from '../../../domain/uuid.js';
import type { NewTemplateInput, TemplateFilter, TemplatesPort } from '../../port/templates.js';
import { lockAccount } from '../accounts-tx.js';
import { lockLiveChannels } from '../channels-tx.js';
import type { Tx } from '../client.js';
import { sqlState, type PgContext } from '../context.js';

type Change = Parameters<TemplatesPort['update']>[1];

export function pgTemplates(ctx: PgContext): TemplatesPort {
  const { sql } = ctx;
  return {
    create: (input) => createTemplate(ctx, input),

    async get(id) {
      const [row] = await sql<{ doc: StoredTemplate }[]>`SELECT doc FROM templates WHERE id = ${id}`;
      return row?.doc;
    },

    async findByAlias(accountId, alias) {
      const [row] = await sql<{ doc: StoredTemplate }[]>`SELECT doc FROM templates WHERE account_id = ${accountId} AND alias = ${alias}`;
      return row?.doc;
    },

    /** One statement: the template by id or alias, joined with the version asked for or the active one. */
    async version(accountId, idOrAlias, version) {
      const byId = isUuid(idOrAlias) ? idOrAlias.toLowerCase() : null;
      const [row] = await sql<{ t: StoredTemplate; v: TemplateVersion }[]>`
        SELECT t.doc AS t, v.doc AS v FROM templates t
        JOIN template_versions v ON v.template_id = t.id AND v.version = coalesce(${version ?? null}::int4, (t.doc->>'activeVersion')::int4)
        WHERE t.account_id = ${accountId} AND (t.id = ${byId} OR t.alias = ${idOrAlias})
        ORDER BY (t.id = ${byId}) DESC LIMIT 1`;
      return row && { template: row.t, version: row.v };
    },

    list: (f) => listTemplates(ctx, f),

    async versions(id) {
      const rows = await sql<{ doc: TemplateVersion }[]>`SELECT doc FROM template_versions WHERE template_id = ${id} ORDER BY version`;
      return rows.map((r) => r.doc);
    },

    update: (id, change) => updateTemplate(ctx, id, change),

    activate: (id, version) =>
      ctx.begin(async (tx) => {
        const [row] = await tx<{ doc: StoredTemplate }[]>`SELECT doc FROM templates WHERE id = ${id} FOR NO KEY UPDATE`;
        if (!row) return undefined;
        const [v] = await tx<{ doc: TemplateVersion }[]>`SELECT doc FROM template_versions WHERE template_id = ${id} AND version = ${version}`;
        if (!v) throw unknownVersion(version);
        const next: StoredTemplate = { ...row.doc, activeVersion: version, updatedAt: new Date().toISOString() };
        await tx`UPDATE templates SET doc = ${tx.json(next as never)} WHERE id = ${id}`;
        return { template: next, version: v.doc };
      }),

    async delete(id) {
      return ctx.begin(async (tx) => {
        const gone = await tx`DELETE FROM templates WHERE id = ${id} RETURNING id`;
        await tx`DELETE FROM template_versions WHERE template_id = ${id}`;
        return gone.length > 0;
      });
    },
  };
}

async function assertLiveChannels(tx: Tx, accountId: string, channelIds: readonly string[]): Promise<void> {
  const live = await lockLiveChannels(tx, channelIds, accountId);
  const missing = channelIds.find((c) => !live.has(c));
  if (missing !== undefined) throw new AppError('channel_not_found', `Channel ${missing} does not exist`);
}

async function assertAliasFree(tx: Tx, accountId: string, alias: string | null, self: string): Promise<void> {
  if (alias === null) return;
  const rows = await tx`SELECT 1 FROM templates WHERE account_id = ${accountId} AND alias = ${alias} AND id <> ${self}`;
  if (rows.length > 0) throw aliasTaken(alias);
}

async function insertTemplate(tx: Tx, t: StoredTemplate, v: TemplateVersion): Promise<void> {
  await tx`
    INSERT INTO templates (id, account_id, alias, name_lc, created_at_ms, doc)
    VALUES (${t.id}, ${t.accountId}, ${t.alias}, ${t.name.toLowerCase()}, ${Date.parse(t.createdAt)}, ${tx.json(t as never)})`;
  await tx`INSERT INTO template_versions (template_id, version, doc) VALUES (${t.id}, ${v.version}, ${tx.json(v as never)})`;
}

/** Under the account's row lock (the count and the alias see every create committed before); the channels FOR SHARE until the commit. */
async function createTemplate(ctx: PgContext, input: NewTemplateInput): Promise<TemplateWithVersion> {
  const now = new Date();
  const template = newStoredTemplate(randomUUID(), input, now);
  const version = versionOf(input.content, 1, now);
  try {
    await ctx.begin(async (tx) => {
      await lockAccount(tx, input.accountId);
      const [{ n }] = await tx<{ n: number }[]>`SELECT count(*)::int8 AS n FROM templates WHERE account_id = ${input.accountId}`;
      if (n >= input.limits.maxPerAccount) throw templateLimitExceeded(input.limits.maxPerAccount);
      await assertAliasFree(tx, input.accountId, input.alias, template.id);
      await assertLiveChannels(tx, input.accountId, input.channelIds);
      await insertTemplate(tx, template, version);
    });
  } catch (err) {
    if (sqlState(err) === '23505' && input.alias !== null) throw aliasTaken(input.alias);
    throw err;
  }
  return { template, version };
}

/**
 * New channels are locked FOR SHARE before the template's row, the order the channel delete
 * takes them in (its channel row, then the templates it unlinks), so the two never deadlock.
 */
async function updateTemplate(ctx: PgContext, id: string, change: Change): Promise<TemplateWithVersion | undefined> {
  const { patch, content, limits } = change;
  const now = new Date();
  try {
    return await ctx.begin(async (tx) => {
      const [peek] = await tx<{ account_id: string }[]>`SELECT account_id FROM templates WHERE id = ${id}`;
      if (!peek) return undefined;
      if (patch.channelIds) await assertLiveChannels(tx, peek.account_id, patch.channelIds);
      const [row] = await tx<{ doc: StoredTemplate }[]>`SELECT doc FROM templates WHERE id = ${id} FOR NO KEY UPDATE`;
      if (!row) return undefined;
      const t = row.doc;
      if (content && t.latestVersion >= limits.maxVersions) throw versionLimitExceeded(limits.maxVersions);
      if (patch.alias !== undefined) await assertAliasFree(tx, t.accountId, patch.alias, t.id);
      const added = content ? versionOf(content, t.latestVersion + 1, now) : undefined;
      const next = patchedTemplate(t, patch, added?.version, now);
      await tx`UPDATE templates SET alias = ${next.alias}, name_lc = ${next.name.toLowerCase()}, doc = ${tx.json(next as never)} WHERE id = ${id}`;
      if (added) await tx`INSERT INTO template_versions (template_id, version, doc) VALUES (${id}, ${added.version}, ${tx.json(added as never)})`;
      const [v] = added ? [{ doc: added }] : await tx<{ doc: TemplateVersion }[]>`SELECT doc FROM template_versions WHERE template_id = ${id} AND version = ${next.activeVersion}`;
      return { template: next, version: v.doc };
    });
  } catch (err) {
    if (sqlState(err) === '23505' && typeof patch.alias === 'string') throw aliasTaken(patch.alias);
    throw err;
  }
}

/** One statement: the page and the number of matches, in creation order (LMDB's index key order). */
async function listTemplates(ctx: PgContext, f: TemplateFilter): Promise<{ results: StoredTemplate[]; totalCount: number }> {
  const { sql } = ctx;
  // Both lower-cased by JavaScript (name_lc), as the LMDB engine compares them.
  const needle = f.name?.toLowerCase();
  const [row] = await sql<{ total: number; results: StoredTemplate[] }[]>`
    WITH m AS (
      SELECT doc, created_at_ms, id FROM templates
      WHERE account_id = ${f.accountId}
        ${f.channelIds ? sql`AND doc->'channelIds' ?| ${f.channelIds}::text[]` : sql``}
        ${needle ? sql`AND strpos(name_lc, ${needle}) > 0` : sql``}
    )
    SELECT (SELECT count(*) FROM m)::int8 AS total,
      (SELECT coalesce(jsonb_agg(p.doc ORDER BY p.created_at_ms, p.id), '[]'::jsonb)
       FROM (SELECT doc, created_at_ms, id FROM m ORDER BY created_at_ms, id LIMIT ${f.limit} OFFSET ${f.offset}) p) AS results`;
  return { results: row.results, totalCount: row.total };
}
