/** The store's domain verbs as submission's DomainRegistry port. */
import type { LmdbStore } from '../store/lmdb/engine.js';
import { findSendingDomain, getSigningKey, hasActiveKey } from '../store/lmdb/domains.js';
import type { StorePort } from '../store/port/index.js';
import type { SendingDomainMatch } from '../store/port/domains.js';
import type { DkimKeyRef, DomainRegistry, SenderDomain } from './ports.js';

/**
 * DomainRegistry over the engine's synchronous reads, while ports.ts's DomainRegistry is
 * synchronous (its callers in sender.ts, finishing.ts and broadcast-expander.ts do not await it).
 * @deprecated use PortDomainRegistry once DomainRegistry's verbs return promises (issue 31).
 */
export class StoreDomainRegistry implements DomainRegistry {
  constructor(private readonly store: LmdbStore) {}

  findSendingDomain(q: { accountId: string; channelId: string; domainName: string }): SenderDomain | undefined {
    const d = findSendingDomain(this.store, q);
    return d ? senderDomain({ domain: d, activeKeyStored: hasActiveKey(this.store, d) }) : undefined;
  }

  signingKey(q: { accountId: string; domainName: string }): DkimKeyRef | undefined {
    return getSigningKey(this.store, q.domainName, q.accountId);
  }
}

/** The registry over the store port: one lookup gives the domain and whether it can be signed. */
export class PortDomainRegistry {
  constructor(private readonly store: Pick<StorePort, 'domains'>) {}

  async findSendingDomain(q: { accountId: string; channelId: string; domainName: string }): Promise<SenderDomain | undefined> {
    const match = await this.store.domains.findSending(q);
    return match && senderDomain(match);
  }

  signingKey(q: { accountId: string; domainName: string }): Promise<DkimKeyRef | undefined> {
    return this.store.domains.signingKey(q);
  }
}

function senderDomain(m: SendingDomainMatch): SenderDomain {
  return { name: m.domain.name, verified: m.domain.verified, signingDomain: m.activeKeyStored ? m.domain.name : undefined };
}
