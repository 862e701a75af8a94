/**
 * The stored state of a new DKIM key (and of an ed25519 key's RSA companion, RFC 8463 3) of a
 * sending domain: its TXT record at selector._domainkey.domain, pending until a check finds it.
 * Every store engine builds a domain's keys with these, so they store the same records.
 */
import { dkimHost } from './dkim-record.js';
import { randomUUID } from 'node:crypto';
import type { ExpectedRecord } from './return-path.js';
import type { LinkHostKind } from './sending-domain.js';
import { newRecordState, type CompanionKey, type DkimAlgorithm, type DomainKey, type SendingDomain } from './sending-domain.js';

/** What a key's record is made of (the port's NewDkimKey without its private key). */
export interface DkimKeyInput {
  selector: string;
  algorithm: DkimAlgorithm;
  /** The TXT value to publish. */
  dnsValue: string;
  rsaCompanion?: DkimKeyInput;
}

export function companionKeyOf(key: DkimKeyInput, domain: string, at: string): CompanionKey {
  return { selector: key.selector, createdAt: at, record: newRecordState({ type: 'txt', host: dkimHost(key.selector, domain), value: key.dnsValue }) };
}

export function domainKeyOf(key: DkimKeyInput, domain: string, at: string): DomainKey {
  const record = newRecordState({ type: 'txt', host: dkimHost(key.selector, domain), value: key.dnsValue });
  const companion = key.rsaCompanion && companionKeyOf(key.rsaCompanion, domain, at);
  return { selector: key.selector, algorithm: key.algorithm, createdAt: at, record, ...(companion ? { rsaCompanion: companion } : {}) };
}

/** What a new sending domain is made from (the store port's NewDomain, less its limit). */
export interface NewDomainInput {
  accountId: string;
  name: string;
  channelIds: readonly string[];
  key: DkimKeyInput;
  returnPath: readonly ExpectedRecord[];
  linkHosts?: Record<LinkHostKind, ExpectedRecord>;
}

/** A new domain's record, unverified, its key active and every record pending: both engines store this. */
export function newDomainRecord(input: NewDomainInput, now: string): SendingDomain {
  return {
    id: randomUUID(),
    accountId: input.accountId,
    name: input.name,
    createdAt: now,
    updatedAt: now,
    verified: false,
    channelIds: [...input.channelIds],
    deletedChannelIds: [],
    activeKey: domainKeyOf(input.key, input.name, now),
    pendingKey: null,
    retiredKeys: [],
    returnPath: input.returnPath.map(newRecordState),
    ...(input.linkHosts ? { linkHosts: { tracking: newRecordState(input.linkHosts.tracking), unsubscribe: newRecordState(input.linkHosts.unsubscribe) } } : {}),
  };
}
