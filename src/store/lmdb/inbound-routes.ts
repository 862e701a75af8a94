/**
 * Store verbs for inbound routes (store/port/inbound-routes.ts). The record is in inboundRoutes,
 * its signing key apart in inboundRouteSecrets (readable: payloads are signed with it; never
 * logged), and inboundRouteIndex holds the account's list, the unique address → route map and
 * the enabled routes of each domain (layout.ts). Every check-then-write is inside one
 * store.write: LMDB's single writer makes it atomic.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { AppError } from '../../domain/errors.js';
import {
  addressTaken,
  firstMatch,
  matchCandidates,
  patchedRoute,
  routeDomain,
  routeLimitExceeded,
  unknownRouteDomain,
  type InboundRoute,
  type InboundRoutePatch,
  type RouteMatch,
} from '../../domain/inbound-route.js';
import type { SendingDomain } from '../../domain/sending-domain.js';
import type { InboundRouteFilter, NewInboundRouteInput, RouteWithKey } from '../port/inbound-routes.js';
import { getChannelRecord } from './channel-records.js';
import { dbsOf } from './databases.js';
import type { Store } from './env.js';
import { KEY_MAX } from './layout.js';

/** The same form as webhooks' keys: receivers verify both with one function. */
function newSecret(): string {
  return 'whsec_' + randomBytes(32).toString('base64url');
}

function accountKey(r: InboundRoute): ['a', string, number, string] {
  return ['a', r.accountId, Date.parse(r.createdAt), r.id];
}

function accountRange(accountId: string) {
  return { start: ['a', accountId], end: ['a', accountId, KEY_MAX] };
}

/** The entry of an enabled route in its domain's list (the oldest first: the postmaster's fallback). */
function enabledKey(r: InboundRoute): ['e', string, number, string] {
  return ['e', routeDomain(r.address), Date.parse(r.createdAt), r.id];
}

/** Meta key: every enabled route has its enabledKey entry (indexEnabledRoutes). */
const ENABLED_INDEXED = 'inboundRoutesEnabledIndexed';

export function getRoute(store: Store, id: string): InboundRoute | undefined {
  return dbsOf(store).inboundRoutes.get(id) as InboundRoute | undefined;
}

/** The account's routes in creation order. */
function routesOf(store: Store, accountId: string): InboundRoute[] {
  const out: InboundRoute[] = [];
  for (const key of dbsOf(store).inboundRouteIndex.getKeys(accountRange(accountId))) {
    const r = getRoute(store, (key as ['a', string, number, string])[3]);
    if (r) out.push(r);
  }
  return out;
}

/** The checks of the port's create, inside the write. */
function checkCreateInTxn(store: Store, input: NewInboundRouteInput): void {
  const dbs = dbsOf(store);
  const count = dbs.inboundRouteIndex.getKeysCount(accountRange(input.accountId));
  if (count >= input.maxPerAccount) throw routeLimitExceeded(input.maxPerAccount);
  if (dbs.inboundRouteIndex.get(['@', input.address]) !== undefined) throw addressTaken(input.address);
  const domain = dbs.domains.get(input.domainId) as SendingDomain | undefined;
  if (!domain || domain.accountId !== input.accountId) throw unknownRouteDomain(input.address.slice(input.address.lastIndexOf('@') + 1));
  assertLiveChannelInTxn(store, input.accountId, input.channelId);
}

function assertLiveChannelInTxn(store: Store, accountId: string, channelId: string): void {
  const c = getChannelRecord(store, channelId);
  if (!c || c.deletedAt || c.accountId !== accountId) throw new AppError('channel_not_found', `Channel ${channelId} does not exist`);
}

export async function createRoute(store: Store, input: NewInboundRouteInput): Promise<RouteWithKey> {
  const now = new Date().toISOString();
  const { maxPerAccount: _max, ...fields } = input;
  const route: InboundRoute = { id: randomUUID(), ...fields, createdAt: now, updatedAt: now };
  const signingKey = newSecret();
  await store.write(() => {
    checkCreateInTxn(store, input);
    const dbs = dbsOf(store);
    dbs.inboundRoutes.put(route.id, route);
    dbs.inboundRouteIndex.put(accountKey(route), 1);
    dbs.inboundRouteIndex.put(['@', route.address], route.id);
    if (route.enabled) dbs.inboundRouteIndex.put(enabledKey(route), 1);
    dbs.inboundRouteSecrets.put(route.id, signingKey);
  });
  return { route, signingKey };
}

export function getRouteSigningKey(store: Store, id: string): string | null {
  return (dbsOf(store).inboundRouteSecrets.get(id) as string | undefined) ?? null;
}

export function listRoutes(store: Store, f: InboundRouteFilter): { results: InboundRoute[]; totalCount: number } {
  const ids = f.channelIds ? new Set(f.channelIds) : null;
  const matches = routesOf(store, f.accountId).filter((r) => !ids || ids.has(r.channelId));
  return { results: matches.slice(f.offset, f.offset + f.limit), totalCount: matches.length };
}

/** A new channel must be a live channel of the route's account, checked in the same write. */
export async function updateRoute(store: Store, id: string, patch: InboundRoutePatch): Promise<InboundRoute | undefined> {
  return store.write(() => {
    const r = getRoute(store, id);
    if (!r) return undefined;
    if (patch.channelId !== undefined && patch.channelId !== r.channelId) assertLiveChannelInTxn(store, r.accountId, patch.channelId);
    const next = patchedRoute(r, patch, new Date());
    dbsOf(store).inboundRoutes.put(id, next);
    if (next.enabled && !r.enabled) dbsOf(store).inboundRouteIndex.put(enabledKey(next), 1);
    if (!next.enabled && r.enabled) dbsOf(store).inboundRouteIndex.remove(enabledKey(r));
    return next;
  });
}

export async function regenerateRouteKey(store: Store, id: string): Promise<RouteWithKey | undefined> {
  const signingKey = newSecret();
  return store.write(() => {
    const r = getRoute(store, id);
    if (!r) return undefined;
    const next = { ...r, updatedAt: new Date().toISOString() };
    dbsOf(store).inboundRoutes.put(id, next);
    dbsOf(store).inboundRouteSecrets.put(id, signingKey);
    return { route: next, signingKey };
  });
}

function removeInTxn(store: Store, r: InboundRoute): void {
  const dbs = dbsOf(store);
  dbs.inboundRoutes.remove(r.id);
  dbs.inboundRouteIndex.remove(accountKey(r));
  dbs.inboundRouteIndex.remove(['@', r.address]);
  if (r.enabled) dbs.inboundRouteIndex.remove(enabledKey(r));
  dbs.inboundRouteSecrets.remove(r.id);
}

export async function deleteRoute(store: Store, id: string): Promise<boolean> {
  return store.write(() => {
    const r = getRoute(store, id);
    if (!r) return false;
    removeInTxn(store, r);
    return true;
  });
}

/** Whether a route is on the domain: a walk of the account's routes (at most the per-account limit). */
export function anyRouteOnDomain(store: Store, domainId: string): boolean {
  const d = dbsOf(store).domains.get(domainId) as SendingDomain | undefined;
  return d !== undefined && routesOf(store, d.accountId).some((r) => r.domainId === domainId);
}

export function matchRoute(store: Store, recipient: string): RouteMatch | undefined {
  return firstMatch(matchCandidates(recipient), (address) => {
    const id = dbsOf(store).inboundRouteIndex.get(['@', address]) as string | undefined;
    return id === undefined ? undefined : getRoute(store, id);
  });
}

/** The first key of the domain's enabled routes: one seek, whatever the number of routes. */
export function oldestEnabledRoute(store: Store, domain: string): InboundRoute | undefined {
  const range = { start: ['e', domain], end: ['e', domain, KEY_MAX], limit: 1 };
  for (const key of dbsOf(store).inboundRouteIndex.getKeys(range)) return getRoute(store, (key as ['e', string, number, string])[3]);
  return undefined;
}

/**
 * Once per data folder, at start (LmdbStore.upgradeData): the enabled routes written before the
 * domain index get their entry. One write: routes are few (inbound.maxRoutesPerAccount per
 * account). Returns how many were indexed.
 */
export async function indexEnabledRoutes(store: Store): Promise<number> {
  if (dbsOf(store).meta.get(ENABLED_INDEXED)) return 0;
  return store.write(() => {
    const dbs = dbsOf(store);
    let indexed = 0;
    for (const { value } of dbs.inboundRoutes.getRange({})) {
      const r = value as InboundRoute;
      if (!r.enabled || dbs.inboundRouteIndex.doesExist(enabledKey(r))) continue;
      dbs.inboundRouteIndex.put(enabledKey(r), 1);
      indexed++;
    }
    dbs.meta.put(ENABLED_INDEXED, true);
    return indexed;
  });
}

/** Channel deletion cleanup (channels.ts CHANNEL_CLEANUPS): the channel's routes go with it. */
export function removeChannelRoutesInTxn(store: Store, channelId: string): void {
  const c = getChannelRecord(store, channelId);
  if (!c) return;
  for (const r of routesOf(store, c.accountId)) if (r.channelId === channelId) removeInTxn(store, r);
}

/** Domain deletion cleanup (domains.ts deleteDomain): the routes on the domain go with it. */
export function removeDomainRoutesInTxn(store: Store, d: Pick<SendingDomain, 'id' | 'accountId'>): void {
  for (const r of routesOf(store, d.accountId)) if (r.domainId === d.id) removeInTxn(store, r);
}
