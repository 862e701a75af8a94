/**
 * Store verbs for stored templates (store/port/templates.ts; issue 34). The record is in
 * templates, its versions in templateVersions under [templateId, version], and templateIndex
 * holds the account's list and the alias → template map (layout.ts). Every check-then-write is
 * inside one store.write: LMDB's single writer makes it atomic.
 */
import { randomUUID } from 'node:crypto';
import { AppError } from '../../domain/errors.js';
import {
  aliasTaken,
  newStoredTemplate,
  patchedTemplate,
  templateLimitExceeded,
  unknownVersion,
  versionLimitExceeded,
  versionOf,
  type StoredTemplate,
  type TemplateContent,
  type TemplateLimits,
  type TemplatePatch,
  type TemplateVersion,
  type TemplateWithVersion,
} from '../../domain/template.js';
import { isUuid } from '../../domain/uuid.js';
import type { NewTemplateInput, TemplateFilter } from '../port/templates.js';
import { getChannelRecord } from './channel-records.js';
import { dbsOf } from './databases.js';
import type { Store } from './env.js';
import { KEY_MAX } from './layout.js';

function accountKey(t: StoredTemplate): ['a', string, number, string] {
  return ['a', t.accountId, Date.parse(t.createdAt), t.id];
}

function accountRange(accountId: string) {
  return { start: ['a', accountId], end: ['a', accountId, KEY_MAX] };
}

export function getTemplate(store: Store, id: string): StoredTemplate | undefined {
  return dbsOf(store).templates.get(id) as StoredTemplate | undefined;
}

export function getTemplateVersion(store: Store, id: string, version: number): TemplateVersion | undefined {
  return dbsOf(store).templateVersions.get([id, version]) as TemplateVersion | undefined;
}

export function findTemplateByAlias(store: Store, accountId: string, alias: string): StoredTemplate | undefined {
  const id = dbsOf(store).templateIndex.get(['@', accountId, alias]) as string | undefined;
  return id === undefined ? undefined : getTemplate(store, id);
}

/** The account's templates in creation order. */
function templatesOf(store: Store, accountId: string): StoredTemplate[] {
  const out: StoredTemplate[] = [];
  for (const key of dbsOf(store).templateIndex.getKeys(accountRange(accountId))) {
    const t = getTemplate(store, (key as ['a', string, number, string])[3]);
    if (t) out.push(t);
  }
  return out;
}

function assertLiveChannelsInTxn(store: Store, accountId: string, channelIds: readonly string[]): void {
  for (const id of channelIds) {
    const c = getChannelRecord(store, id);
    if (!c || c.deletedAt || c.accountId !== accountId) throw new AppError('channel_not_found', `Channel ${id} does not exist`);
  }
}

function assertAliasFreeInTxn(store: Store, accountId: string, alias: string | null, self?: string): void {
  if (alias === null) return;
  const owner = dbsOf(store).templateIndex.get(['@', accountId, alias]) as string | undefined;
  if (owner !== undefined && owner !== self) throw aliasTaken(alias);
}

export async function createTemplate(store: Store, input: NewTemplateInput): Promise<TemplateWithVersion> {
  const now = new Date();
  const template = newStoredTemplate(randomUUID(), input, now);
  const version = versionOf(input.content, 1, now);
  await store.write(() => {
    const dbs = dbsOf(store);
    if (dbs.templateIndex.getKeysCount(accountRange(input.accountId)) >= input.limits.maxPerAccount) throw templateLimitExceeded(input.limits.maxPerAccount);
    assertAliasFreeInTxn(store, input.accountId, input.alias);
    assertLiveChannelsInTxn(store, input.accountId, input.channelIds);
    dbs.templates.put(template.id, template);
    dbs.templateIndex.put(accountKey(template), 1);
    if (template.alias !== null) dbs.templateIndex.put(['@', template.accountId, template.alias], template.id);
    dbs.templateVersions.put([template.id, 1], version);
  });
  return { template, version };
}

/** By id (of the account) or by alias; the active version unless one is named. */
export function readTemplateVersion(store: Store, accountId: string, idOrAlias: string, version?: number): TemplateWithVersion | undefined {
  const byId = isUuid(idOrAlias) ? getTemplate(store, idOrAlias.toLowerCase()) : undefined;
  const template = byId ?? findTemplateByAlias(store, accountId, idOrAlias);
  if (!template || template.accountId !== accountId) return undefined;
  const v = getTemplateVersion(store, template.id, version ?? template.activeVersion);
  return v && { template, version: v };
}

export function listTemplates(store: Store, f: TemplateFilter): { results: StoredTemplate[]; totalCount: number } {
  const ids = f.channelIds ? new Set(f.channelIds) : null;
  const needle = f.name?.toLowerCase();
  const matches = templatesOf(store, f.accountId).filter(
    (t) => (!ids || t.channelIds.some((c) => ids.has(c))) && (!needle || t.name.toLowerCase().includes(needle)),
  );
  return { results: matches.slice(f.offset, f.offset + f.limit), totalCount: matches.length };
}

export function listTemplateVersions(store: Store, id: string): TemplateVersion[] {
  return [...dbsOf(store).templateVersions.getRange({ start: [id], end: [id, KEY_MAX] }).map(({ value }) => value as TemplateVersion)];
}

export async function updateTemplate(
  store: Store,
  id: string,
  change: { patch: TemplatePatch; content?: TemplateContent; limits: TemplateLimits },
): Promise<TemplateWithVersion | undefined> {
  const now = new Date();
  return store.write(() => {
    const t = getTemplate(store, id);
    if (!t) return undefined;
    const { patch, content, limits } = change;
    if (content && t.latestVersion >= limits.maxVersions) throw versionLimitExceeded(limits.maxVersions);
    if (patch.alias !== undefined) assertAliasFreeInTxn(store, t.accountId, patch.alias, t.id);
    if (patch.channelIds) assertLiveChannelsInTxn(store, t.accountId, patch.channelIds.filter((c) => !t.channelIds.includes(c)));
    const added = content ? versionOf(content, t.latestVersion + 1, now) : undefined;
    const next = patchedTemplate(t, patch, added?.version, now);
    const dbs = dbsOf(store);
    if (t.alias !== next.alias) {
      if (t.alias !== null) dbs.templateIndex.remove(['@', t.accountId, t.alias]);
      if (next.alias !== null) dbs.templateIndex.put(['@', t.accountId, next.alias], t.id);
    }
    if (added) dbs.templateVersions.put([t.id, added.version], added);
    dbs.templates.put(t.id, next);
    const version = added ?? getTemplateVersion(store, t.id, next.activeVersion);
    if (!version) throw new AppError('internal_error', `Template ${t.id} has no version ${next.activeVersion}`);
    return { template: next, version };
  });
}

export async function activateTemplateVersion(store: Store, id: string, version: number): Promise<TemplateWithVersion | undefined> {
  return store.write(() => {
    const t = getTemplate(store, id);
    if (!t) return undefined;
    const v = getTemplateVersion(store, id, version);
    if (!v) throw unknownVersion(version);
    const next = { ...t, activeVersion: version, updatedAt: new Date().toISOString() };
    dbsOf(store).templates.put(id, next);
    return { template: next, version: v };
  });
}

export async function deleteTemplate(store: Store, id: string): Promise<boolean> {
  return store.write(() => {
    const t = getTemplate(store, id);
    if (!t) return false;
    const dbs = dbsOf(store);
    dbs.templates.remove(id);
    dbs.templateIndex.remove(accountKey(t));
    if (t.alias !== null) dbs.templateIndex.remove(['@', t.accountId, t.alias]);
    for (const key of [...dbs.templateVersions.getKeys({ start: [id], end: [id, KEY_MAX] })]) dbs.templateVersions.remove(key);
    return true;
  });
}

/** Channel deletion cleanup (channels.ts CHANNEL_CLEANUPS): the channel is unlinked from the account's templates. */
export function unlinkChannelFromTemplatesInTxn(store: Store, channelId: string): void {
  const c = getChannelRecord(store, channelId);
  if (!c) return;
  for (const t of templatesOf(store, c.accountId)) {
    if (!t.channelIds.includes(channelId)) continue;
    dbsOf(store).templates.put(t.id, { ...t, channelIds: t.channelIds.filter((id) => id !== channelId), updatedAt: new Date().toISOString() });
  }
}
