/**
 * The PostgreSQL engine's sending domains (store/port/domains.ts DomainsPort): reads in
 * domains-read.ts, the domain's own writes in domains-write.ts, its keys and checks in
 * domains-keys.ts.
 */
import type { PgContext } from '../context.js';
import type { DomainsPort } from '../../port/domains.js';
import { addRsaCompanion, recordCheck, setPendingKey } from '../domains-keys.js';
import { countDomains, dkimSelectors, findDomainByName, findSending, getDomain, listDomains, signingKey, toRecheck } from '../domains-read.js';
import { createDomain, deleteDomain, setDomainChannels } from '../domains-write.js';

export function pgDomains(ctx: PgContext): DomainsPort {
  return {
    create: (input) => createDomain(ctx, input),
    get: (id) => getDomain(ctx, id),
    findByName: (accountId, name) => findDomainByName(ctx, accountId, name),
    count: (accountId) => countDomains(ctx, accountId),
    list: (filter) => listDomains(ctx, filter),
    setChannels: (id, channelIds) => setDomainChannels(ctx, id, channelIds),
    delete: (id) => deleteDomain(ctx, id),
    setPendingKey: (id, key) => setPendingKey(ctx, id, key),
    addRsaCompanion: (id, selector, key) => addRsaCompanion(ctx, id, selector, key),
    recordCheck: (id, results, at) => recordCheck(ctx, id, results, at),
    dkimSelectors: (id) => dkimSelectors(ctx, id),
    findSending: (q) => findSending(ctx, q),
    signingKey: (q) => signingKey(ctx, q),
    toRecheck: () => toRecheck(ctx),
  };
}
