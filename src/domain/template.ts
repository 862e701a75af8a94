/**
 * Stored templates (issue 34): a named, versioned template of an account, which sends will name
 * by id or alias instead of carrying the template itself. Pure types and rules; the store keeps
 * them (store/port/templates.ts), templates/service.ts applies the access rules.
 *
 * A template is account-wide and linked to channels as a domain is (`channelIds`): a channel key
 * sees the templates linked to its channel, an account-level key every template of the account.
 * Versions are numbered from 1 and never change once stored; one of them is active.
 */
import { AppError } from './errors.js';

/** What a version holds: the parts a send's inline `template` holds, without the data. */
export interface TemplateContent {
  subject: string;
  html?: string;
  text?: string;
  /** Inline the rules of <style> elements into style attributes when rendering (juice). */
  inlineStyles?: boolean;
}

export interface TemplateVersion extends TemplateContent {
  version: number;
  createdAt: string;
}

export interface StoredTemplate {
  id: string;
  accountId: string;
  name: string;
  /** Unique within the account; lower case, never of an id's form, so `{id|alias}` is unambiguous. */
  alias: string | null;
  channelIds: string[];
  activeVersion: number;
  /** The highest version number (versions are never removed, so also their count). */
  latestVersion: number;
  createdAt: string;
  updatedAt: string;
}

/** A template with one of its versions (the active one unless another was asked for). */
export interface TemplateWithVersion {
  template: StoredTemplate;
  version: TemplateVersion;
}

/**
 * Which stored template and version a message was sent with (its record and message details):
 * the content itself was committed with the message, so this only says where it came from.
 * `alias` is the template's alias at the time of the send, when it had one.
 */
export interface TemplateOrigin {
  id: string;
  alias?: string;
  version: number;
}

export function originOf(found: TemplateWithVersion): TemplateOrigin {
  const { template, version } = found;
  return template.alias === null ? { id: template.id, version: version.version } : { id: template.id, alias: template.alias, version: version.version };
}

/**
 * Whether a key may read (and send with) a template: an account-level key (`channelId` null)
 * every template of its account, a channel key those linked to its channel (as for domains;
 * `[]` links none). The account itself is the caller's to compare.
 */
export function templateVisibleTo(t: StoredTemplate, channelId: string | null | undefined): boolean {
  return !channelId || t.channelIds.includes(channelId);
}

/** The limits of config.templates that the store's atomic verbs apply. */
export interface TemplateLimits {
  maxPerAccount: number;
  maxVersions: number;
}

/** The changes of a PATCH other than a new version. */
export interface TemplatePatch {
  name?: string;
  alias?: string | null;
  channelIds?: string[];
}

/** The stored size of a version: the UTF-8 bytes of its parts (config.templates.maxBytes). */
export function contentBytes(c: TemplateContent): number {
  return Buffer.byteLength(c.subject) + Buffer.byteLength(c.html ?? '') + Buffer.byteLength(c.text ?? '');
}

/** A version as stored: only the parts given, inlineStyles only when true. */
export function versionOf(content: TemplateContent, version: number, now: Date): TemplateVersion {
  const v: TemplateVersion = { version, subject: content.subject, createdAt: now.toISOString() };
  if (content.html !== undefined) v.html = content.html;
  if (content.text !== undefined) v.text = content.text;
  if (content.inlineStyles) v.inlineStyles = true;
  return v;
}

/** A new template's record: version 1, active (the id is the caller's, so this stays pure). */
export function newStoredTemplate(id: string, t: { accountId: string; name: string; alias: string | null; channelIds: readonly string[] }, now: Date): StoredTemplate {
  return {
    id,
    accountId: t.accountId,
    name: t.name,
    alias: t.alias,
    channelIds: [...t.channelIds],
    activeVersion: 1,
    latestVersion: 1,
    createdAt: now.toISOString(),
    updatedAt: now.toISOString(),
  };
}

/** The record after a patch (and a new active version, when one was added). */
export function patchedTemplate(t: StoredTemplate, patch: TemplatePatch, newVersion: number | undefined, now: Date): StoredTemplate {
  return {
    ...t,
    name: patch.name ?? t.name,
    alias: patch.alias === undefined ? t.alias : patch.alias,
    channelIds: patch.channelIds ?? t.channelIds,
    activeVersion: newVersion ?? t.activeVersion,
    latestVersion: newVersion ?? t.latestVersion,
    updatedAt: now.toISOString(),
  };
}

export function templateLimitExceeded(max: number): AppError {
  return new AppError('resource_limit_exceeded', `An account may have at most ${max} templates`);
}

export function versionLimitExceeded(max: number): AppError {
  return new AppError('resource_limit_exceeded', `A template may have at most ${max} versions`);
}

export function aliasTaken(alias: string): AppError {
  return new AppError('validation_failed', `The alias ${alias} is taken`, {
    errors: { '/alias': [{ code: 'duplicate', message: `another template of the account has the alias ${alias}` }] },
  });
}

export function unknownVersion(version: number): AppError {
  return new AppError('validation_failed', `The template has no version ${version}`, {
    errors: { '/version': [{ code: 'invalid_value', message: `the template has no version ${version}` }] },
  });
}
