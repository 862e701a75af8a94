/**
 * /templates (issue 34): stored templates with versions, named by id or alias.
 *
 * Access (checked by TemplateService, which each handler calls once), as for domains: writes
 * need an account-level key; a channel key reads the templates linked to its channel. Another
 * account's template is 403, an unknown one 404 not_found; a channel that is unknown is 404
 * channel_not_found, another account's 403.
 */
import type { FastifyInstance } from 'fastify';
import type { StoredTemplate, TemplateVersion, TemplateWithVersion } from '../../domain/template.js';
import type { Page, TemplateDraftRenderJson, TemplateJson, TemplateSummaryJson, TemplateVersionJson } from '../../domain/wire.js';
import type { DraftRenderBody, NewTemplateBody, TemplatePatchBody, TemplateService } from '../../templates/service.js';
import { channelIdsFilter, schemaErrors } from '../query-params.js';
import { pagingProperties } from '../schemas.js';

const name = { type: 'string', minLength: 1, maxLength: 100, pattern: '^[^\\x00-\\x1f\\x7f]*$' } as const;
/** Lower case so that `Welcome` and `welcome` never name two templates; the service refuses an id's form. */
const alias = { type: 'string', minLength: 1, maxLength: 100, pattern: '^[a-z0-9][a-z0-9._-]*$' } as const;
const channelIds = { type: 'array', maxItems: 100, uniqueItems: true, items: { type: 'string', format: 'uuid' } } as const;
/** RFC 5322 2.2: a subject is one header field; the renderer also replaces line breaks from data. */
const subject = { type: 'string', minLength: 1, maxLength: 998 } as const;
const part = { type: 'string', minLength: 1 } as const;
const inlineStyles = { type: 'boolean' } as const;

const createBody = {
  type: 'object',
  additionalProperties: false,
  required: ['name', 'subject'],
  properties: { name, alias, channelIds, subject, html: part, text: part, inlineStyles },
} as const;
const patchBody = {
  type: 'object',
  additionalProperties: false,
  minProperties: 1,
  properties: { name, alias: { ...alias, type: ['string', 'null'] }, channelIds, subject, html: { ...part, type: ['string', 'null'] }, text: { ...part, type: ['string', 'null'] }, inlineStyles },
} as const;
const version = { type: 'integer', minimum: 1, maximum: 1_000_000 } as const;
const activateBody = { type: 'object', additionalProperties: false, required: ['version'], properties: { version } } as const;
const renderBody = { type: 'object', additionalProperties: false, required: ['data'], properties: { data: { type: 'object' }, version } } as const;
/** The inline template shape of a send (routes/send.ts), and the data: content that is not stored. */
export const draftRenderBody = {
  type: 'object',
  additionalProperties: false,
  required: ['subject'],
  properties: { subject, html: part, text: part, inlineStyles, data: { type: 'object' } },
} as const;
const retrieveQuery = { type: 'object', additionalProperties: false, properties: { version } } as const;
const listQuery = {
  type: 'object',
  additionalProperties: false,
  properties: { ...pagingProperties, name: { type: 'string', maxLength: 100 }, channelIds: { type: 'string', maxLength: 20_000 } },
} as const;

function summaryJson(t: StoredTemplate): TemplateSummaryJson {
  return {
    id: t.id,
    name: t.name,
    alias: t.alias,
    channelIds: t.channelIds,
    activeVersion: t.activeVersion,
    latestVersion: t.latestVersion,
    createdAt: t.createdAt,
    updatedAt: t.updatedAt,
  };
}

function versionJson(v: TemplateVersion): TemplateVersionJson {
  return { version: v.version, subject: v.subject, html: v.html ?? null, text: v.text ?? null, inlineStyles: v.inlineStyles ?? false, createdAt: v.createdAt };
}

function templateJson({ template, version: v }: TemplateWithVersion): TemplateJson {
  return { ...summaryJson(template), version: versionJson(v) };
}

export function templateRoutes(templates: TemplateService) {
  return (app: FastifyInstance): void => {
    const idOf = (req: { params: unknown }) => (req.params as { idOrAlias: string }).idOrAlias;

    app.post('/templates', { schema: { body: createBody } }, async (req) => templateJson(await templates.create(req.principal, req.body as NewTemplateBody)));

    // Content that is not stored (the dashboard's unsaved edits), as a version renders: the same
    // answer without `version`, the same 422s (templating_error with line and column, max_size).
    app.post('/templates/render', { schema: { body: draftRenderBody } }, async (req): Promise<TemplateDraftRenderJson> => {
      const out = await templates.renderDraft(req.body as DraftRenderBody);
      return { subject: out.subject ?? '', html: out.html ?? null, text: out.text ?? null };
    });

    app.get('/templates', { schema: { querystring: listQuery }, attachValidation: true }, async (req): Promise<Page<TemplateSummaryJson>> => {
      const q = req.query as { limit?: number; offset?: number; name?: string; channelIds?: string };
      const errors = schemaErrors(req);
      const ids = channelIdsFilter(q.channelIds, req.principal, errors);
      errors.throwIfAny('The query has invalid parameters');
      const found = await templates.list({ accountId: req.principal.accountId, channelIds: ids, name: q.name || undefined, limit: q.limit ?? 25, offset: q.offset ?? 0 });
      return { results: found.results.map(summaryJson), totalCount: found.totalCount };
    });

    app.get('/templates/:idOrAlias', { schema: { querystring: retrieveQuery } }, async (req) => {
      return templateJson(await templates.visibleTo(req.principal, idOf(req), (req.query as { version?: number }).version));
    });

    app.patch('/templates/:idOrAlias', { schema: { body: patchBody } }, async (req) => templateJson(await templates.update(req.principal, idOf(req), req.body as TemplatePatchBody)));

    app.delete('/templates/:idOrAlias', async (req, reply) => {
      await templates.remove(req.principal, idOf(req));
      return reply.code(204).send();
    });

    app.get('/templates/:idOrAlias/versions', async (req): Promise<Page<TemplateVersionJson>> => {
      const { versions } = await templates.versions(req.principal, idOf(req));
      return { results: versions.map(versionJson), totalCount: versions.length };
    });

    app.post('/templates/:idOrAlias/activate', { schema: { body: activateBody } }, async (req) => {
      return templateJson(await templates.activate(req.principal, idOf(req), (req.body as { version: number }).version));
    });

    app.post('/templates/:idOrAlias/render', { schema: { body: renderBody } }, async (req) => {
      const out = await templates.render(req.principal, idOf(req), req.body as { data: Record<string, unknown>; version?: number });
      return { version: out.version, subject: out.subject ?? '', html: out.html ?? null, text: out.text ?? null };
    });
  };
}
