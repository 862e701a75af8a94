/**
 * TemplatesPort (store/port/templates.ts), run against every engine: a template created with
 * version 1 active, read by id and by alias, listed (paged, by channel, by a part of its name),
 * patched with new versions, activated, deleted with its versions; the channel delete unlinking
 * its channel; and the atomic rules under concurrent callers (the per-account limit, the version
 * limit, one alias per account).
 */
import { expect, it } from 'vitest';
import { AppError } from '../../src/domain/errors.js';
import type { StoredTemplate, TemplateLimits } from '../../src/domain/template.js';
import type { StorePort } from '../../src/store/port/index.js';
import type { NewTemplateInput } from '../../src/store/port/templates.js';
import { eachEngine } from './engines.js';

const UNKNOWN_ID = '00000000-0000-4000-8000-000000000000';
const LIMITS: TemplateLimits = { maxPerAccount: 10, maxVersions: 5 };

async function tenant(store: StorePort): Promise<{ accountId: string; channelId: string }> {
  const accountId = (await store.accounts.create({ name: 'a', state: 'active' })).id;
  const channelId = (await store.channels.create({ accountId, name: 'c', deliveryType: 'live', tracking: { links: false, opens: false }, maxPerAccount: 100 })).id;
  return { accountId, channelId };
}

function input(accountId: string, o: Partial<NewTemplateInput> = {}): NewTemplateInput {
  return { accountId, name: 'Welcome', alias: null, channelIds: [], content: { subject: 'Hi {{name}}', html: '<p>Hi</p>' }, limits: LIMITS, ...o };
}

function codeOf(err: unknown): string | undefined {
  return err instanceof AppError ? err.code : undefined;
}

function fieldCode(err: unknown, pointer: string): string | undefined {
  return err instanceof AppError ? err.errors?.[pointer]?.[0]?.code : undefined;
}

eachEngine('templates', (ctx) => {
  it('creates a template with version 1 active, readable by id, by alias and as a version', async () => {
    const { accountId, channelId } = await tenant(ctx.store);
    const { template, version } = await ctx.store.templates.create(input(accountId, { alias: 'welcome', channelIds: [channelId], content: { subject: 'S', text: 'T', inlineStyles: true } }));
    expect(template).toEqual({
      id: expect.any(String),
      accountId,
      name: 'Welcome',
      alias: 'welcome',
      channelIds: [channelId],
      activeVersion: 1,
      latestVersion: 1,
      createdAt: expect.any(String),
      updatedAt: template.createdAt,
    });
    expect(version).toEqual({ version: 1, subject: 'S', text: 'T', inlineStyles: true, createdAt: template.createdAt });
    expect(await ctx.store.templates.get(template.id)).toEqual(template);
    expect(await ctx.store.templates.findByAlias(accountId, 'welcome')).toEqual(template);
    expect(await ctx.store.templates.version(accountId, template.id)).toEqual({ template, version });
    expect(await ctx.store.templates.version(accountId, template.id.toUpperCase())).toEqual({ template, version });
    expect(await ctx.store.templates.version(accountId, 'welcome', 1)).toEqual({ template, version });
    expect(await ctx.store.templates.version(accountId, 'welcome', 2)).toBeUndefined();
    expect(await ctx.store.templates.version(accountId, UNKNOWN_ID)).toBeUndefined();
    const other = await tenant(ctx.store);
    expect(await ctx.store.templates.version(other.accountId, template.id)).toBeUndefined();
    expect(await ctx.store.templates.version(other.accountId, 'welcome')).toBeUndefined();
  });

  it('adds versions on update, keeps the alias unique in the account, and activates an older version', async () => {
    const { accountId } = await tenant(ctx.store);
    const a = await ctx.store.templates.create(input(accountId, { alias: 'a' }));
    await ctx.store.templates.create(input(accountId, { alias: 'b', name: 'Other' }));
    const v2 = await ctx.store.templates.update(a.template.id, { patch: { name: 'Renamed' }, content: { subject: 'Two', text: 't2' }, limits: LIMITS });
    expect(v2?.template).toMatchObject({ name: 'Renamed', alias: 'a', activeVersion: 2, latestVersion: 2 });
    expect(v2?.version).toMatchObject({ version: 2, subject: 'Two', text: 't2' });
    const renamedOnly = await ctx.store.templates.update(a.template.id, { patch: { alias: 'c' }, limits: LIMITS });
    expect(renamedOnly?.version.version).toBe(2);
    expect(await ctx.store.templates.findByAlias(accountId, 'a')).toBeUndefined();
    expect((await ctx.store.templates.findByAlias(accountId, 'c'))?.id).toBe(a.template.id);
    const taken = await ctx.store.templates.update(a.template.id, { patch: { alias: 'b' }, limits: LIMITS }).catch((e: unknown) => e);
    expect(fieldCode(taken, '/alias')).toBe('duplicate');
    const again = await ctx.store.templates.create(input(accountId, { alias: 'b' })).catch((e: unknown) => e);
    expect(fieldCode(again, '/alias')).toBe('duplicate');
    const other = await tenant(ctx.store);
    expect((await ctx.store.templates.create(input(other.accountId, { alias: 'b' }))).template.alias).toBe('b');

    const back = await ctx.store.templates.activate(a.template.id, 1);
    expect(back?.template).toMatchObject({ activeVersion: 1, latestVersion: 2 });
    expect(back?.version).toEqual(a.version);
    expect((await ctx.store.templates.version(accountId, 'c'))?.version.version).toBe(1);
    expect(fieldCode(await ctx.store.templates.activate(a.template.id, 9).catch((e: unknown) => e), '/version')).toBe('invalid_value');
    expect(await ctx.store.templates.activate(UNKNOWN_ID, 1)).toBeUndefined();
    expect(await ctx.store.templates.update(UNKNOWN_ID, { patch: {}, limits: LIMITS })).toBeUndefined();
    expect((await ctx.store.templates.versions(a.template.id)).map((v) => [v.version, v.subject])).toEqual([[1, 'Hi {{name}}'], [2, 'Two']]);
    expect(await ctx.store.templates.versions(UNKNOWN_ID)).toEqual([]);
  });

  it('lists in creation order, paged, by channel and by a part of the name', async () => {
    const { accountId, channelId } = await tenant(ctx.store);
    const names = ['Welcome mail', 'Receipt', 'welcome back'];
    const created: StoredTemplate[] = [];
    for (const [i, name] of names.entries()) created.push((await ctx.store.templates.create(input(accountId, { name, channelIds: i === 1 ? [channelId] : [] }))).template);
    // Creation order is createdAt, then id: two created in the same millisecond are in id order.
    const ordered = [...created].sort((x, y) => x.createdAt.localeCompare(y.createdAt) || (x.id < y.id ? -1 : 1));
    const ids = ordered.map((t) => t.id);
    const all = await ctx.store.templates.list({ accountId, limit: 2, offset: 0 });
    expect(all.totalCount).toBe(3);
    expect(all.results.map((t) => t.id)).toEqual(ids.slice(0, 2));
    expect((await ctx.store.templates.list({ accountId, limit: 2, offset: 2 })).results.map((t) => t.id)).toEqual([ids[2]]);
    const byName = await ctx.store.templates.list({ accountId, name: 'WELCOME', limit: 10, offset: 0 });
    expect(byName.results.map((t) => t.name)).toEqual(ordered.map((t) => t.name).filter((n) => n.toLowerCase().includes('welcome')));
    const byChannel = await ctx.store.templates.list({ accountId, channelIds: [channelId], limit: 10, offset: 0 });
    expect(byChannel).toEqual({ results: [expect.objectContaining({ id: created[1].id })], totalCount: 1 });
  });

  it('deletes a template with its versions and alias, and unlinks a deleted channel', async () => {
    const { accountId, channelId } = await tenant(ctx.store);
    const { template } = await ctx.store.templates.create(input(accountId, { alias: 'gone', channelIds: [channelId] }));
    const kept = await ctx.store.templates.create(input(accountId, { channelIds: [channelId] }));
    expect(await ctx.store.templates.delete(template.id)).toBe(true);
    expect(await ctx.store.templates.delete(template.id)).toBe(false);
    expect(await ctx.store.templates.get(template.id)).toBeUndefined();
    expect(await ctx.store.templates.versions(template.id)).toEqual([]);
    expect(await ctx.store.templates.findByAlias(accountId, 'gone')).toBeUndefined();
    await ctx.store.templates.create(input(accountId, { alias: 'gone' }));
    await ctx.store.channels.delete(channelId);
    expect((await ctx.store.templates.get(kept.template.id))?.channelIds).toEqual([]);
  });

  it('refuses channels that are not live channels of the account', async () => {
    const { accountId } = await tenant(ctx.store);
    const other = await tenant(ctx.store);
    expect(codeOf(await ctx.store.templates.create(input(accountId, { channelIds: [other.channelId] })).catch((e: unknown) => e))).toBe('channel_not_found');
    const { template } = await ctx.store.templates.create(input(accountId));
    const err = await ctx.store.templates.update(template.id, { patch: { channelIds: [UNKNOWN_ID] }, limits: LIMITS }).catch((e: unknown) => e);
    expect(codeOf(err)).toBe('channel_not_found');
  });

  it('holds the per-account limit, the version limit and the alias under concurrent callers', async () => {
    const { accountId } = await tenant(ctx.store);
    const limits = { maxPerAccount: 3, maxVersions: 3 };
    const creates = await Promise.allSettled(Array.from({ length: 6 }, (_, i) => ctx.store.templates.create(input(accountId, { name: `t${i}`, limits }))));
    expect(creates.filter((r) => r.status === 'fulfilled')).toHaveLength(3);
    expect(creates.filter((r) => r.status === 'rejected').map((r) => codeOf((r as PromiseRejectedResult).reason))).toEqual(Array(3).fill('resource_limit_exceeded'));
    const id = (creates.find((r) => r.status === 'fulfilled') as PromiseFulfilledResult<{ template: { id: string } }>).value.template.id;
    const updates = await Promise.allSettled(Array.from({ length: 4 }, () => ctx.store.templates.update(id, { patch: {}, content: { subject: 's', text: 't' }, limits })));
    expect(updates.filter((r) => r.status === 'fulfilled')).toHaveLength(2);
    expect((await ctx.store.templates.get(id))?.latestVersion).toBe(3);
    const other = await tenant(ctx.store);
    const aliases = await Promise.allSettled(Array.from({ length: 4 }, (_, i) => ctx.store.templates.create(input(other.accountId, { name: `x${i}`, alias: 'same' }))));
    expect(aliases.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
  });
});
