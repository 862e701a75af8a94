/**
 * Store verbs for webhooks. The signing key lives in its own database (webhookSecrets): it has
 * to stay readable, since the dispatcher signs with it, so it is never hashed; the API shows it
 * to the account (payloadSigningKey) and it is never logged.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { AppError } from '../../domain/errors.js';
import { EMPTY_STATUS, patchedWebhook, type Webhook, type WebhookStatus } from '../../domain/webhook.js';
import type { NewWebhook, NewWebhookInput, WebhookFilter, WebhookPatch } from '../port/webhooks.js';
import { getChannelRecord } from './channel-records.js';
import { dbsOf } from './databases.js';
import type { Store } from './env.js';
import { KEY_MAX } from './layout.js';
import { forgetNoWebhooksInTxn, removeOutboxOfWebhookInTxn } from './webhook-outbox.js';

const SECRET_PREFIX = 'whsec_';

function newSecret(): string {
  return SECRET_PREFIX + randomBytes(32).toString('base64url');
}

function indexKey(w: Webhook): [string, number, string] {
  return [w.accountId, Date.parse(w.createdAt), w.id];
}

// Declared by the port now; re-exported for the callers not yet on it.
export type { NewWebhook, NewWebhookInput, WebhookFilter, WebhookPatch };

/** The count and the insert are one write: the limit holds under concurrent creates. */
export async function createWebhook(store: Store, input: NewWebhookInput): Promise<NewWebhook> {
  const now = new Date().toISOString();
  const { maxPerAccount, ...fields } = input;
  const webhook: Webhook = { id: randomUUID(), ...fields, createdAt: now, updatedAt: now };
  const signingKey = newSecret();
  await store.write(() => {
    const count = dbsOf(store).accountWebhooks.getKeysCount({ start: [input.accountId], end: [input.accountId, KEY_MAX] });
    if (count >= maxPerAccount) throw new AppError('resource_limit_exceeded', `An account may have at most ${maxPerAccount} webhooks`);
    dbsOf(store).webhooks.put(webhook.id, webhook);
    dbsOf(store).accountWebhooks.put(indexKey(webhook), 1);
    forgetNoWebhooksInTxn(store, webhook.accountId);
    dbsOf(store).webhookSecrets.put(webhook.id, signingKey);
  });
  return { webhook, signingKey };
}

export function getWebhook(store: Store, id: string): Webhook | undefined {
  return dbsOf(store).webhooks.get(id) as Webhook | undefined;
}

export function getSigningKey(store: Store, id: string): string | null {
  return (dbsOf(store).webhookSecrets.get(id) as string | undefined) ?? null;
}

export function getWebhookStatus(store: Store, id: string): WebhookStatus {
  return { ...EMPTY_STATUS, ...(dbsOf(store).webhookStatus.get(id) as WebhookStatus | undefined) };
}

export function listWebhooks(store: Store, f: WebhookFilter): { results: Webhook[]; totalCount: number } {
  const ids = f.channelIds ? new Set(f.channelIds) : null;
  const matches: Webhook[] = [];
  for (const { key } of dbsOf(store).accountWebhooks.getRange({ start: [f.accountId], end: [f.accountId, KEY_MAX] })) {
    const w = getWebhook(store, (key as [string, number, string])[2]);
    if (!w) continue;
    if (ids && (w.channelId === null || !ids.has(w.channelId))) continue;
    matches.push(w);
  }
  return { results: matches.slice(f.offset, f.offset + f.limit), totalCount: matches.length };
}

/** Disabling a webhook drops what was queued for it: a disabled webhook receives nothing. */
export async function updateWebhook(store: Store, id: string, patch: WebhookPatch): Promise<Webhook | undefined> {
  return store.write(() => {
    const w = getWebhook(store, id);
    if (!w) return undefined;
    const next = patchedWebhook(w, patch, new Date());
    dbsOf(store).webhooks.put(id, next);
    if (w.enabled && !next.enabled) removeOutboxOfWebhookInTxn(store, id);
    return next;
  });
}

export async function regenerateSigningKey(store: Store, id: string): Promise<NewWebhook | undefined> {
  const signingKey = newSecret();
  return store.write(() => {
    const w = getWebhook(store, id);
    if (!w) return undefined;
    const next = { ...w, updatedAt: new Date().toISOString() };
    dbsOf(store).webhooks.put(id, next);
    dbsOf(store).webhookSecrets.put(id, signingKey);
    return { webhook: next, signingKey };
  });
}

function removeInTxn(store: Store, w: Webhook): void {
  dbsOf(store).webhooks.remove(w.id);
  dbsOf(store).accountWebhooks.remove(indexKey(w));
  dbsOf(store).webhookSecrets.remove(w.id);
  dbsOf(store).webhookStatus.remove(w.id);
  removeOutboxOfWebhookInTxn(store, w.id);
}

export async function deleteWebhook(store: Store, id: string): Promise<boolean> {
  return store.write(() => {
    const w = getWebhook(store, id);
    if (!w) return false;
    removeInTxn(store, w);
    return true;
  });
}

/** Channel deletion cleanup: webhooks bound to the channel go with it (spec 4.5). */
export function removeChannelWebhooksInTxn(store: Store, channelId: string): void {
  const c = getChannelRecord(store, channelId);
  if (!c) return;
  for (const { key } of dbsOf(store).accountWebhooks.getRange({ start: [c.accountId], end: [c.accountId, KEY_MAX] })) {
    const w = getWebhook(store, (key as [string, number, string])[2]);
    if (w && w.channelId === channelId) removeInTxn(store, w);
  }
}
