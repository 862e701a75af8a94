/**
 * Stored templates with versions (issue 34): account-wide, linked to channels as domains are.
 *
 * Part of the store port (store/port/index.ts): asynchronous verbs that take and return plain
 * data. Implemented by the LMDB engine (store/lmdb/templates.ts) and the PostgreSQL engine
 * (store/postgres/repos/templates.ts), checked by test/store-contract/templates.contract.test.ts.
 * A channel's delete unlinks it from the templates in the commit that deletes it.
 */
import type { StoredTemplate, TemplateContent, TemplateLimits, TemplatePatch, TemplateVersion, TemplateWithVersion } from '../../domain/template.js';

export interface NewTemplateInput {
  accountId: string;
  name: string;
  alias: string | null;
  channelIds: string[];
  content: TemplateContent;
  limits: TemplateLimits;
}

export interface TemplateFilter {
  accountId: string;
  /** Only templates linked to one of these channels (channel keys: their own). */
  channelIds?: string[];
  /** A part of the name, compared case-insensitively. */
  name?: string;
  limit: number;
  offset: number;
}

export interface TemplatesPort {
  /**
   * Creates a template with version 1 active, as one atomic step (LMDB's single writer; the
   * account's row lock and a unique index on (account, alias) elsewhere): fewer than
   * limits.maxPerAccount templates (else resource_limit_exceeded), the alias free in the account
   * (else validation_failed `duplicate` on /alias), every channel a live channel of the account
   * (else channel_not_found).
   */
  create(input: NewTemplateInput): Promise<TemplateWithVersion>;

  get(id: string): Promise<StoredTemplate | undefined>;

  /** The template of an alias in an account. */
  findByAlias(accountId: string, alias: string): Promise<StoredTemplate | undefined>;

  /**
   * One version of a template named by id or alias within an account (the active one when
   * `version` is absent): what a send by stored template reads, one or two key look-ups. Undefined
   * when the template is not the account's or the version does not exist.
   */
  version(accountId: string, idOrAlias: string, version?: number): Promise<TemplateWithVersion | undefined>;

  /** An account's templates in creation order (createdAt, then id), one page, with the number of matches. */
  list(f: TemplateFilter): Promise<{ results: StoredTemplate[]; totalCount: number }>;

  /** Every version of a template, oldest first ([] when the template does not exist). */
  versions(id: string): Promise<TemplateVersion[]>;

  /**
   * Applies a patch and, when `content` is given, adds it as the next version, which becomes
   * active; atomic (a read-modify-write under the engine's lock): the version limit
   * (resource_limit_exceeded), the alias (`duplicate`) and new channels (channel_not_found) are
   * checked in the commit. Undefined when the template does not exist.
   */
  update(id: string, change: { patch: TemplatePatch; content?: TemplateContent; limits: TemplateLimits }): Promise<TemplateWithVersion | undefined>;

  /** Makes a stored version the active one (validation_failed on /version when there is none); undefined when the template does not exist. */
  activate(id: string, version: number): Promise<TemplateWithVersion | undefined>;

  /** Removes the template with its versions; false when it did not exist. */
  delete(id: string): Promise<boolean>;
}
