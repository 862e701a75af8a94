/** The store's domain verbs as submission's DomainRegistry port. */
import type { LmdbStore } from '../store/lmdb/engine.js';
import { findSendingDomain, getSigningKey, hasActiveKey } from '../store/lmdb/domains.js';
import type { DkimKeyRef, DomainRegistry, SenderDomain } from './ports.js';

export class StoreDomainRegistry implements DomainRegistry {
  constructor(private readonly store: LmdbStore) {}

  findSendingDomain(q: { accountId: string; channelId: string; domainName: string }): SenderDomain | undefined {
    const d = findSendingDomain(this.store, q);
    return d ? { name: d.name, verified: d.verified, signingDomain: hasActiveKey(this.store, d) ? d.name : undefined } : undefined;
  }

  signingKey(q: { accountId: string; domainName: string }): DkimKeyRef | undefined {
    return getSigningKey(this.store, q.domainName, q.accountId);
  }
}
