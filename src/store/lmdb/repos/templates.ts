/** The LMDB engine's LmdbTemplates: the port's verbs over store/lmdb/templates.ts. */
import type { StoredTemplate, TemplateContent, TemplateLimits, TemplatePatch, TemplateVersion, TemplateWithVersion } from '../../../domain/template.js';
import type { Store } from '../env.js';
import type { NewTemplateInput, TemplateFilter, TemplatesPort } from '../../port/templates.js';
import {
  activateTemplateVersion,
  createTemplate,
  deleteTemplate,
  findTemplateByAlias,
  getTemplate,
  listTemplates,
  listTemplateVersions,
  readTemplateVersion,
  updateTemplate,
} from '../templates.js';

export class LmdbTemplates implements TemplatesPort {
  constructor(private readonly store: Store) {}

  /** The limit, the alias and the live channels are checked inside the one write. */
  create(input: NewTemplateInput): Promise<TemplateWithVersion> {
    return createTemplate(this.store, input);
  }

  async get(id: string): Promise<StoredTemplate | undefined> {
    return getTemplate(this.store, id);
  }

  async findByAlias(accountId: string, alias: string): Promise<StoredTemplate | undefined> {
    return findTemplateByAlias(this.store, accountId, alias);
  }

  async version(accountId: string, idOrAlias: string, version?: number): Promise<TemplateWithVersion | undefined> {
    return readTemplateVersion(this.store, accountId, idOrAlias, version);
  }

  async list(f: TemplateFilter): Promise<{ results: StoredTemplate[]; totalCount: number }> {
    return listTemplates(this.store, f);
  }

  async versions(id: string): Promise<TemplateVersion[]> {
    return listTemplateVersions(this.store, id);
  }

  update(id: string, change: { patch: TemplatePatch; content?: TemplateContent; limits: TemplateLimits }): Promise<TemplateWithVersion | undefined> {
    return updateTemplate(this.store, id, change);
  }

  activate(id: string, version: number): Promise<TemplateWithVersion | undefined> {
    return activateTemplateVersion(this.store, id, version);
  }

  delete(id: string): Promise<boolean> {
    return deleteTemplate(this.store, id);
  }
}
