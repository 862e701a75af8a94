/**
 * Store verbs for inbound routes (store/port/inbound-routes.ts). The record is in inboundRoutes,
 * its signing key apart in inboundRouteSecrets (readable: payloads are signed with it; never
 * logged), and inboundRouteIndex holds the account's list and the unique address → route map
 * (layout.ts). Every check-then-write is inside one store.write: LMDB's single writer makes it
 * atomic.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { AppError } from '../../domain/errors.js';
import {
  addressTaken,
  firstMatch,
  matchCandidates,
  patchedRoute,
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
