/**
 * The LMDB engine's LmdbDomains: the port's verbs over the functions of store/lmdb/. The decoded
 * records stay in the engine's cache (read-caches.ts), revalidated against the stored bytes on
 * every read (domains.ts getDomain), so no write of any writer needs to invalidate it.
 */
import type { CheckResults, SendingDomain } from '../../../domain/sending-domain.js';
import type { Store } from '../env.js';
import type { DomainsPort } from '../../port/index.js';
import type { DomainFilter, NewDkimKey, NewDomain, SendingDomainMatch, SigningKey } from '../../port/domains.js';
import {
  addRsaCompanion,
  countAccountDomains,
  createDomain,
  deleteDomain,
  domainsToRecheck,
  findDomainByName,
  findSendingMatch,
  getDomain,
  getSigningKey,
  listDomains,
  recordDomainCheck,
  setDomainChannels,
  setPendingKey,
  storedDkimSelectors,
} from '../domains.js';

export class LmdbDomains implements DomainsPort {
  constructor(private readonly store: Store) {}

  /** Name, limit and links are checked inside the write (createDomain): atomic under LMDB's one writer. */
  create(input: NewDomain): Promise<SendingDomain> {
    return createDomain(this.store, input);
  }

  async get(id: string): Promise<SendingDomain | undefined> {
    return getDomain(this.store, id);
  }

  async findByName(accountId: string, name: string): Promise<SendingDomain | undefined> {
    return findDomainByName(this.store, accountId, name);
  }

  async count(accountId: string): Promise<number> {
    return countAccountDomains(this.store, accountId);
  }

  async list(filter: DomainFilter): Promise<{ results: SendingDomain[]; totalCount: number }> {
    return listDomains(this.store, filter);
  }

  setChannels(id: string, channelIds: string[]): Promise<SendingDomain | undefined> {
    return setDomainChannels(this.store, id, channelIds);
  }

  delete(id: string): Promise<boolean> {
    return deleteDomain(this.store, id);
  }

  setPendingKey(id: string, key: NewDkimKey): Promise<SendingDomain | undefined> {
    return setPendingKey(this.store, id, key);
  }

  addRsaCompanion(id: string, selector: string, key: NewDkimKey): Promise<SendingDomain | undefined> {
    return addRsaCompanion(this.store, id, selector, key);
  }

  recordCheck(id: string, results: CheckResults, at: string): Promise<SendingDomain | undefined> {
    return recordDomainCheck(this.store, id, results, at);
  }

  async dkimSelectors(id: string): Promise<string[]> {
    return storedDkimSelectors(this.store, id);
  }

  async findSending(q: { accountId: string; channelId: string; domainName: string }): Promise<SendingDomainMatch | undefined> {
    return findSendingMatch(this.store, q);
  }

  async signingKey(q: { accountId: string; domainName: string }): Promise<SigningKey | undefined> {
    return getSigningKey(this.store, q.domainName, q.accountId);
  }

  async toRecheck(): Promise<string[]> {
    return domainsToRecheck(this.store);
  }
}
