/**
 * The stored template service (issue 34): the writes of /templates with their policy, the reads,
 * the render, and the access rules, so the route handlers only parse and map. As for domains,
 * whose `channelIds` templates mirror: writes need an account-level key; a channel key reads the
 * templates linked to its channel; another account's template (or one not linked to a channel
 * key's channel) is 403 forbidden, an unknown one 404 not_found; the channels named must be live
 * channels of the account (404 channel_not_found, 403). A template is named by id or alias.
 *
 * Every version is compiled at create and patch (templating_error 422 on /subject, /html or
 * /text, with the line and column), so a stored version renders with any data that a send's
 * inline template would render with.
 */
import { accessibleChannel } from '../channels/service.js';
import { requireAccountKey } from '../domain/access.js';
import { AppError } from '../domain/errors.js';
import { contentBytes, templateVisibleTo, type StoredTemplate, type TemplateContent, type TemplatePatch, type TemplateVersion, type TemplateWithVersion } from '../domain/template.js';
import type { Principal } from '../domain/types.js';
import { isUuid } from '../domain/uuid.js';
import type { StorePort } from '../store/port/index.js';
import type { TemplateFilter } from '../store/port/templates.js';
import { toAppError } from '../submission/task-errors.js';
import type { RenderInput, RenderOutput } from '../workers/render.js';

export interface TemplateServiceOptions {
  store: StorePort;
  /** config.templates */
  limits: { maxPerAccount: number; maxVersions: number; maxBytes: number };
  /** The worker pool's render task (the renderer sends use). */
  render: (input: RenderInput) => Promise<RenderOutput>;
}

/** The content fields of a create or a patch; null removes a part in a patch. */
export interface ContentInput {
  subject?: string;
  html?: string | null;
  text?: string | null;
  inlineStyles?: boolean;
}

/** POST /templates/render: content that is not stored (the inline template shape of a send), and data. */
export interface DraftRenderBody {
  subject: string;
  html?: string;
  text?: string;
  inlineStyles?: boolean;
  data?: Record<string, unknown>;
}

export type NewTemplateBody = ContentInput & { name: string; alias?: string; channelIds?: string[]; subject: string };
export type TemplatePatchBody = ContentInput & { name?: string; alias?: string | null; channelIds?: string[] };

export class TemplateService {

  constructor(private readonly o: TemplateServiceOptions) {}

  /** Account-level keys only; the channels first (404/403), then the alias and the content (422); the store decides the limit and the alias again. */
  async create(p: Principal, body: NewTemplateBody): Promise<TemplateWithVersion> {
    requireAccountKey(p);
    const channelIds = await this.channelsToLink(p, body.channelIds);
    const alias = checkedAlias(body.alias);
    const content = await this.checkedContent(merged(undefined, body));
    return this.o.store.templates.create({ accountId: p.accountId, name: body.name, alias, channelIds, content, limits: this.o.limits });
  }

  /** The template and one of its versions (the active one unless `version` is given; an unknown version is 404). */
  async visibleTo(p: Principal, idOrAlias: string, version?: number): Promise<TemplateWithVersion> {
    const found = await this.o.store.templates.version(p.accountId, idOrAlias, version);
    if (found) return this.allowed(p, found);
    // Not the account's: an id of another account's template is 403, anything else 404.
    const other = isUuid(idOrAlias) ? await this.o.store.templates.get(idOrAlias.toLowerCase()) : undefined;
    if (other && other.accountId !== p.accountId) throw forbidden();
    throw new AppError('not_found', version === undefined ? `Template ${idOrAlias} does not exist` : `Template ${idOrAlias} has no version ${version}`);
  }

  list(filter: TemplateFilter): Promise<{ results: StoredTemplate[]; totalCount: number }> {
    return this.o.store.templates.list(filter);
  }

  async versions(p: Principal, idOrAlias: string): Promise<{ template: StoredTemplate; versions: TemplateVersion[] }> {
    const { template } = await this.visibleTo(p, idOrAlias);
    return { template, versions: await this.o.store.templates.versions(template.id) };
  }

  /** Visible (404/403), then the account-key rule (403), then the channels named, then the fields (422). */
  async update(p: Principal, idOrAlias: string, body: TemplatePatchBody): Promise<TemplateWithVersion> {
    const current = await this.writableBy(p, idOrAlias);
    const patch: TemplatePatch = {};
    if (body.name !== undefined) patch.name = body.name;
    if (body.alias !== undefined) patch.alias = body.alias === null ? null : checkedAlias(body.alias);
    if (body.channelIds !== undefined) patch.channelIds = await this.channelsToLink(p, body.channelIds);
    const changesContent = ['subject', 'html', 'text', 'inlineStyles'].some((k) => k in body);
    const content = changesContent ? await this.checkedContent(merged(current.version, body)) : undefined;
    const updated = await this.o.store.templates.update(current.template.id, { patch, content, limits: this.o.limits });
    if (!updated) throw notFound(idOrAlias);
    return updated;
  }

  async activate(p: Principal, idOrAlias: string, version: number): Promise<TemplateWithVersion> {
    const { template } = await this.writableBy(p, idOrAlias);
    const updated = await this.o.store.templates.activate(template.id, version);
    if (!updated) throw notFound(idOrAlias);
    return updated;
  }

  async remove(p: Principal, idOrAlias: string): Promise<void> {
    const { template } = await this.writableBy(p, idOrAlias);
    if (!(await this.o.store.templates.delete(template.id))) throw notFound(idOrAlias);
  }

  /** A version rendered with data in the worker pool (templating_error 422 on /subject, /html or /text). */
  async render(p: Principal, idOrAlias: string, input: { data: Record<string, unknown>; version?: number }): Promise<RenderOutput & { version: number }> {
    const { version } = await this.visibleTo(p, idOrAlias, input.version);
    try {
      const out = await this.o.render({ subject: version.subject, html: version.html, text: version.text, inlineStyles: version.inlineStyles, data: input.data });
      return { ...out, version: version.version };
    } catch (err) {
      throw toAppError(err, '');
    }
  }

  /**
   * Content that is not stored (the dashboard editor's unsaved edits) checked as a create checks
   * it (one of html and text, max_size, templating_error with line and column), so a draft that
   * previews is one that saves, then rendered by the worker pool as a version is. Nothing is
   * remembered: see RenderInput.cache. Any key of the account may: nothing stored is read.
   */
  async renderDraft(body: DraftRenderBody): Promise<RenderOutput> {
    const content = this.sizedContent(merged(undefined, body));
    try {
      // Checked on the worker thread that renders it (RenderInput.check), not here: the main
      // thread compiled a 500 KB part in 1.4 s, and a preview comes at every pause in typing.
      return await this.o.render({ ...content, data: body.data ?? {}, cache: false, check: true });
    } catch (err) {
      throw toAppError(err, '');
    }
  }

  private allowed(p: Principal, found: TemplateWithVersion): TemplateWithVersion {
    if (!templateVisibleTo(found.template, p.channelId)) throw forbidden();
    return found;
  }

  private async writableBy(p: Principal, idOrAlias: string): Promise<TemplateWithVersion> {
    const found = await this.visibleTo(p, idOrAlias);
    requireAccountKey(p);
    return found;
  }

  private async channelsToLink(p: Principal, ids: readonly string[] | undefined): Promise<string[]> {
    const linked: string[] = [];
    for (const id of new Set((ids ?? []).map((i) => i.toLowerCase()))) linked.push((await accessibleChannel(this.o.store, p, id)).id);
    return linked;
  }

  /** One of html and text, within maxBytes, every part compiling (checked on a worker thread). */
  private async checkedContent(c: TemplateContent): Promise<TemplateContent> {
    this.sizedContent(c);
    try {
      // On a worker thread, as a draft's (renderDraft): a part of templates.maxBytes took 1.4 s
      // to compile on the main thread. Nothing rendered, nothing remembered there: a send names
      // the version later, and its intake remembers what it checked (submission/template-check.ts).
      await this.o.render({ subject: c.subject, html: c.html, text: c.text, data: {}, check: true, checkOnly: true, cache: false });
    } catch (err) {
      throw toAppError(err, '');
    }
    return c;
  }

  /** One of html and text, within maxBytes. */
  private sizedContent(c: TemplateContent): TemplateContent {
    if (c.html === undefined && c.text === undefined) throw fieldError('/html', 'required', 'a template needs html or text (or both)');
    const bytes = contentBytes(c);
    if (bytes > this.o.limits.maxBytes) throw fieldError('', 'max_size', `the template's parts are ${bytes} bytes; at most ${this.o.limits.maxBytes} are stored`);
    return c;
  }
}

/** A version's content after a patch: the active version's parts with the body's over them (null removes). */
function merged(base: TemplateContent | undefined, body: ContentInput): TemplateContent {
  const pick = (k: 'html' | 'text'): string | undefined => (body[k] === null ? undefined : (body[k] ?? base?.[k]));
  const out: TemplateContent = { subject: body.subject ?? base?.subject ?? '' };
  const html = pick('html');
  const text = pick('text');
  if (html !== undefined) out.html = html;
  if (text !== undefined) out.text = text;
  if (body.inlineStyles ?? base?.inlineStyles) out.inlineStyles = true;
  return out;
}

/** Aliases never have an id's form, so `/templates/{id|alias}` names one template. */
function checkedAlias(alias: string | undefined): string | null {
  if (alias === undefined) return null;
  if (isUuid(alias)) throw fieldError('/alias', 'invalid_format', 'must not have the form of an id (a UUID)');
  return alias;
}

function fieldError(pointer: string, code: string, message: string): AppError {
  return new AppError('validation_failed', 'The request body has invalid fields', { errors: { [pointer]: [{ code, message }] } });
}

function forbidden(): AppError {
  return new AppError('forbidden', 'The API key may not access this template');
}

function notFound(idOrAlias: string): AppError {
  return new AppError('not_found', `Template ${idOrAlias} does not exist`);
}
