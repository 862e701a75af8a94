/** The store's domain verbs (the store port) as submission's DomainRegistry port. */
import type { StorePort } from '../store/port/index.js';
import type { SendingDomainMatch } from '../store/port/domains.js';
import type { DkimKeyRef, DomainRegistry, SenderDomain } from './ports.js';

/** The registry over the store port: one lookup gives the domain and whether it can be signed. */
export class PortDomainRegistry implements DomainRegistry {
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
