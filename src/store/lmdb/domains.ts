/**
 * Store verbs for sending domains. The domain record (DNS records, statuses, links) and the DKIM
 * private keys live in separate databases, so nothing that reads a domain for display ever holds
 * key material: private keys leave the store only through getSigningKey().
 */
import { AppError } from '../../domain/errors.js';
import { domainLimitExceeded, duplicateName } from '../../domain/domain-rules.js';
import {
  applyCheck,
  keySelectors,
  needsRecheck,
  signingCompanion,
  wasVerified,
  type CheckResults,
  type CompanionKey,
  type SendingDomain,
} from '../../domain/sending-domain.js';
import { companionKeyOf as companionKey, domainKeyOf as domainKey, newDomainRecord } from '../../domain/domain-keys.js';
import { asciiNeedleOf, lookupDomainName as normalizeName } from '../../domain/domain-name.js';
import { getChannel, getChannelRecord } from './channel-records.js';
import { revalidated } from './bytes.js';
import { cachesOf, dbsOf } from './databases.js';
import { removeDomainRoutesInTxn } from './inbound-routes.js';
import type { Store } from './env.js';
import { KEY_MAX } from './layout.js';
import { deepFreeze } from '../../domain/deep-freeze.js';
import type { DomainFilter, NewDkimKey, NewDomain, SendingDomainMatch, SigningKey } from '../port/domains.js';

export type { DomainFilter, NewDkimKey, SigningKey } from '../port/domains.js';
export { duplicateName, selectorsOf } from '../../domain/domain-rules.js';

interface DkimPrivateKey {
  privateKeyPem: string;
}

function indexKey(d: SendingDomain): [string, number, string] {
  return [d.accountId, Date.parse(d.createdAt), d.id];
}

function putKey(store: Store, domainId: string, key: NewDkimKey): void {
  dbsOf(store).dkimKeys.put([domainId, key.selector], { privateKeyPem: key.privateKeyPem } satisfies DkimPrivateKey);
  if (key.rsaCompanion) putKey(store, domainId, key.rsaCompanion);
}

function accountDomainIds(store: Store, accountId: string): string[] {
  return [...dbsOf(store).accountDomains.getKeys({ start: [accountId], end: [accountId, KEY_MAX] })].map((k) => (k as [string, number, string])[2]);
}

/** Throws channel_not_found unless every id is a live channel of the account (checked in the write). */
function assertLiveChannelsInTxn(store: Store, accountId: string, channelIds: readonly string[]): void {
  for (const id of channelIds) {
    const c = getChannel(store, id);
    if (!c || c.accountId !== accountId) throw new AppError('channel_not_found', `Channel ${id} does not exist`);
  }
}

export function countAccountDomains(store: Store, accountId: string): number {
  return dbsOf(store).accountDomains.getKeysCount({ start: [accountId], end: [accountId, KEY_MAX] });
}

/** The selectors of the DKIM private keys stored for a domain (current and pending). */
export function storedDkimSelectors(store: Store, domainId: string): string[] {
  return [...dbsOf(store).dkimKeys.getKeys({ start: [domainId], end: [domainId, KEY_MAX] })].map((k) => (k as [string, string])[1]);
}

/**
 * The domain record; frozen, because the same object is handed to every reader until it changes.
 * Decoded records live in the store's cache (read-caches.ts) with the exact stored bytes they
 * were decoded from: every message on the SMTP and HTTP intake paths reads its sending domain
 * several times (link check, verified check, signing key, at MAIL FROM and again at DATA), and
 * comparing the bytes is cheaper than decoding them again. The bytes are read on every call, so
 * a domain verified, rotated, deleted or moved is seen by the very next read (inside a write
 * too: the write's own bytes are compared, and a write that throws leaves other bytes).
 */
export function getDomain(store: Store, id: string): SendingDomain | undefined {
  const db = dbsOf(store).domains;
  return revalidated(db, cachesOf(store).domains, id, () => deepFreeze(db.get(id) as SendingDomain));
}

export function findDomainByName(store: Store, accountId: string, name: string): SendingDomain | undefined {
  const id = dbsOf(store).domainNames.get([accountId, name]) as string | undefined;
  return id ? getDomain(store, id) : undefined;
}

export async function createDomain(store: Store, input: NewDomain): Promise<SendingDomain> {
  const now = new Date().toISOString();
  const domain = newDomainRecord(input, now);
  // Limit, uniqueness and the links are checked inside the write so concurrent requests cannot
  // overshoot the limit, register one name twice or link a channel being deleted.
  await store.write(() => {
    if (dbsOf(store).domainNames.get([input.accountId, input.name]) !== undefined) throw duplicateName(input.name);
    if (countAccountDomains(store, input.accountId) >= input.maxPerAccount) {
      throw domainLimitExceeded(input.maxPerAccount);
    }
    assertLiveChannelsInTxn(store, input.accountId, domain.channelIds);
    dbsOf(store).domains.put(domain.id, domain);
    dbsOf(store).accountDomains.put(indexKey(domain), 1);
    dbsOf(store).domainNames.put([domain.accountId, domain.name], domain.id);
    putKey(store, domain.id, input.key);
  });
  return domain;
}

export function listDomains(store: Store, f: DomainFilter): { results: SendingDomain[]; totalCount: number } {
  const needle = f.name?.toLowerCase();
  const asciiNeedle = needle ? asciiNeedleOf(needle) : undefined;
  const channels = f.channelIds ? new Set(f.channelIds) : null;
  const matches: SendingDomain[] = [];
  for (const id of accountDomainIds(store, f.accountId)) {
    const d = getDomain(store, id);
    if (!d) continue;
    if (needle && !d.name.includes(needle) && !(asciiNeedle && d.name.includes(asciiNeedle))) continue;
    if (channels && !d.channelIds.some((c) => channels.has(c))) continue;
    matches.push(d);
  }
  return { results: matches.slice(f.offset, f.offset + f.limit), totalCount: matches.length };
}

/** Replaces the linked channels (which must be live channels of the domain's account). */
export async function setDomainChannels(store: Store, id: string, channelIds: string[]): Promise<SendingDomain | undefined> {
  return store.write(() => {
    const d = getDomain(store, id);
    if (!d) return undefined;
    assertLiveChannelsInTxn(store, d.accountId, channelIds);
    const next: SendingDomain = { ...d, channelIds: [...channelIds], deletedChannelIds: [], updatedAt: new Date().toISOString() };
    dbsOf(store).domains.put(id, next);
    return next;
  });
}

export async function deleteDomain(store: Store, id: string): Promise<boolean> {
  return store.write(() => {
    const d = getDomain(store, id);
    if (!d) return false;
    dbsOf(store).domains.remove(id);
    dbsOf(store).accountDomains.remove(indexKey(d));
    dbsOf(store).domainNames.remove([d.accountId, d.name]);
    for (const key of [...dbsOf(store).dkimKeys.getKeys({ start: [id], end: [id, KEY_MAX] })]) dbsOf(store).dkimKeys.remove(key);
    removeDomainRoutesInTxn(store, d);
    return true;
  });
}

/**
 * Makes `key` the domain's pending key. A pending key that was not promoted yet is replaced and
 * its private key deleted (its selector is never used again).
 */
export async function setPendingKey(store: Store, id: string, key: NewDkimKey): Promise<SendingDomain | undefined> {
  return store.write(() => {
    const d = getDomain(store, id);
    if (!d) return undefined;
    const now = new Date().toISOString();
    for (const selector of d.pendingKey ? keySelectors(d.pendingKey) : []) dbsOf(store).dkimKeys.remove([id, selector]);
    const next: SendingDomain = { ...d, pendingKey: domainKey(key, d.name, now), updatedAt: now };
    dbsOf(store).domains.put(id, next);
    putKey(store, id, key);
    return next;
  });
}

/**
 * Gives the active ed25519 key `selector`, stored without one, its RSA companion; nothing when the
 * key was rotated meanwhile or has one already. The companion of a key that was verified is
 * advisory (domain/sending-domain.ts), so the domain does not stop sending until it is published.
 */
export async function addRsaCompanion(store: Store, id: string, selector: string, key: NewDkimKey): Promise<SendingDomain | undefined> {
  return store.write(() => {
    const d = getDomain(store, id);
    if (!d || d.activeKey.selector !== selector || d.activeKey.algorithm !== 'ed25519' || d.activeKey.rsaCompanion) return d;
    const now = new Date().toISOString();
    const rsaCompanion: CompanionKey = { ...companionKey(key, d.name, now), ...(wasVerified(d.activeKey.record) ? { advisory: true as const } : {}) };
    const next: SendingDomain = { ...d, activeKey: { ...d.activeKey, rsaCompanion }, updatedAt: now };
    dbsOf(store).domains.put(id, next);
    putKey(store, id, key);
    return next;
  });
}

/** Records the outcome of a DNS check; a promoted pending key retires the active one. */
export async function recordDomainCheck(store: Store, id: string, results: CheckResults, at: string): Promise<SendingDomain | undefined> {
  return store.write(() => {
    const d = getDomain(store, id);
    if (!d) return undefined;
    const { domain, retiredKeys } = applyCheck(d, results, at);
    dbsOf(store).domains.put(id, domain);
    for (const retired of retiredKeys) dbsOf(store).dkimKeys.remove([id, retired.selector]);
    return domain;
  });
}

/** Ids of the domains the periodic re-check watches (verified, or verified once and now failing). */
export function domainsToRecheck(store: Store): string[] {
  const ids: string[] = [];
  for (const { key, value } of dbsOf(store).domains.getRange({})) {
    if (needsRecheck(value as SendingDomain)) ids.push(key as string);
  }
  return ids;
}

/**
 * The domain a channel may send from: `domainName` (exact name; case, a root dot and U-labels
 * are normalized) registered in the account and linked to the live channel. Undefined
 * otherwise. The caller decides what `verified: false` means (403 domain_unverified on live
 * channels).
 */
export function findSendingDomain(store: Store, q: { accountId: string; channelId: string; domainName: string }): SendingDomain | undefined {
  const d = findDomainByName(store, q.accountId, normalizeName(q.domainName));
  if (!d || !d.channelIds.includes(q.channelId)) return undefined;
  return getChannel(store, q.channelId) ? d : undefined;
}

/** findSendingDomain with whether its active key is stored, read together (the intake's one lookup). */
export function findSendingMatch(store: Store, q: { accountId: string; channelId: string; domainName: string }): SendingDomainMatch | undefined {
  const domain = findSendingDomain(store, q);
  return domain && { domain, activeKeyStored: hasActiveKey(store, domain) };
}

/** Whether the domain's active DKIM key is stored, without reading (or decoding) the private key. */
export function hasActiveKey(store: Store, d: SendingDomain): boolean {
  return dbsOf(store).dkimKeys.doesExist([d.id, d.activeKey.selector]);
}

/**
 * The domain's active DKIM key, with which all its mail is signed, and its RSA companion while
 * the companion's record is verified (a signature whose key is not published fails DKIM);
 * undefined if no such domain.
 */
export function getSigningKey(store: Store, domainName: string, accountId: string): SigningKey | undefined {
  const d = findDomainByName(store, accountId, normalizeName(domainName));
  if (!d) return undefined;
  const key = dbsOf(store).dkimKeys.get([d.id, d.activeKey.selector]) as DkimPrivateKey | undefined;
  if (!key) return undefined;
  const signing: SigningKey = { domain: d.name, selector: d.activeKey.selector, algorithm: d.activeKey.algorithm, privateKeyPem: key.privateKeyPem };
  const companion = signingCompanion(d.activeKey);
  const companionPem = companion && (dbsOf(store).dkimKeys.get([d.id, companion.selector]) as DkimPrivateKey | undefined);
  if (companion && companionPem) signing.rsaCompanion = { selector: companion.selector, algorithm: 'rsa', privateKeyPem: companionPem.privateKeyPem };
  return signing;
}

/**
 * Channel deletion cleanup (inside the delete transaction, after the tombstone was written):
 * the channel may no longer send from any domain; domains keep listing it as deleted.
 */
export function unlinkChannelFromDomainsInTxn(store: Store, channelId: string): void {
  const channel = getChannelRecord(store, channelId);
  if (!channel) return;
  for (const id of accountDomainIds(store, channel.accountId)) {
    const d = getDomain(store, id);
    if (!d || !d.channelIds.includes(channelId)) continue;
    const next: SendingDomain = {
      ...d,
      channelIds: d.channelIds.filter((c) => c !== channelId),
      deletedChannelIds: [...d.deletedChannelIds, channelId],
      updatedAt: new Date().toISOString(),
    };
    dbsOf(store).domains.put(id, next);
  }
}
