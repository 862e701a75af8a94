/**
 * Sending domains, their DKIM keys and DNS check results.
 *
 * Part of the store port (store/port/index.ts): asynchronous verbs that take and return plain
 * data; what must commit together is one verb. Implemented by the LMDB engine in
 * store/lmdb/repos/ and checked by the contract suite in test/store-contract/.
 *
 * The domain record (DNS records, statuses, links) and the DKIM private keys are kept apart: a
 * private key leaves the store only through `signingKey`, never with a record read for display.
 *
 * Caching: the records are read several times per message on the SMTP and HTTP intake paths
 * (link check, verified check, signing key), so an engine may keep decoded records in memory.
 * Whatever it caches, a read must see every write whose verb has resolved, on any node: the
 * LMDB engine revalidates each entry on every read against the stored bytes (a write by any
 * writer changes them), so it needs no other invalidation; an engine shared by several nodes
 * keys its entries by a row version (PostgreSQL: a version column bumped by every write) and
 * compares it on read, or drops the entries a notification names (the writing verb sends the
 * domain's id through the coordination port's wake-ups, each node's listener evicts it).
 */
import type { ExpectedRecord } from '../../domain/return-path.js';
import type { CheckResults, DkimAlgorithm, LinkHostKind, SendingDomain } from '../../domain/sending-domain.js';

/** A freshly generated key, as the domain service hands it over. */
export interface NewDkimKey {
  selector: string;
  algorithm: DkimAlgorithm;
  privateKeyPem: string;
  /** The TXT value to publish, e.g. "v=DKIM1; k=rsa; p=...". */
  dnsValue: string;
  /** An ed25519 key's RSA companion (domain/sending-domain.ts), stored and retired with it. */
  rsaCompanion?: NewDkimKey;
}

/** What signing needs (the same shape as submission's DkimKeyRef). */
export interface SigningKey {
  domain: string;
  selector: string;
  algorithm: DkimAlgorithm;
  privateKeyPem: string;
  /** The RSA companion of an ed25519 key, once its record is verified: mail is signed with both. */
  rsaCompanion?: { selector: string; algorithm: 'rsa'; privateKeyPem: string };
}

export interface DomainFilter {
  accountId: string;
  /** Domains linked to any of these channels. */
  channelIds?: string[];
  /** Partial, case-insensitive match on the name (a U-label needle matches its A-label form too). */
  name?: string;
  limit: number;
  offset: number;
}

export interface NewDomain {
  accountId: string;
  /** Normalized already: lower-case A-labels without the root dot (domain/domain-name.ts). */
  name: string;
  /** Live channels of the account to link. */
  channelIds: string[];
  key: NewDkimKey;
  returnPath: ExpectedRecord[];
  /** Absent: the domain gets them at its next check. */
  linkHosts?: Record<LinkHostKind, ExpectedRecord>;
  /** config.limits.domainsPerAccount: the account's domains may not exceed it. */
  maxPerAccount: number;
}

/** A domain a channel may send from, and whether its active key's private key is stored. */
export interface SendingDomainMatch {
  domain: SendingDomain;
  /** The d= domain signingKey would give: mail from it can be signed. */
  activeKeyStored: boolean;
}

export interface DomainsPort {
  /**
   * Registers a domain with its first DKIM key (fresh id, unverified). One atomic insert that
   * refuses, in this order: a name the account has already (AppError validation_failed, /name
   * duplicate: insert-if-absent on (accountId, name), SQL: a unique constraint), the account's
   * `maxPerAccount`-th domain (resource_limit_exceeded: counted in the insert's commit, SQL: the
   * account's row locked), a channel that is not a live channel of the account
   * (channel_not_found: read in the same commit, so a channel being deleted is never linked).
   * Concurrent creations never exceed the limit or register one name twice.
   */
  create(input: NewDomain): Promise<SendingDomain>;
  /** The domain with this id, or undefined. Frozen: the same object may go to every reader. */
  get(id: string): Promise<SendingDomain | undefined>;
  /** The account's domain of exactly this (normalized) name, or undefined. */
  findByName(accountId: string, name: string): Promise<SendingDomain | undefined>;
  /** How many domains the account has (the cheap refusal before a key is generated). */
  count(accountId: string): Promise<number>;
  /** The account's domains matching the filter, oldest first (createdAt, then id), one page and the total. */
  list(filter: DomainFilter): Promise<{ results: SendingDomain[]; totalCount: number }>;
  /**
   * Replaces the linked channels (deleted ones are no longer listed); undefined for an unknown
   * domain. Refuses with channel_not_found unless every id is a live channel of the domain's
   * account, checked in the same commit as the update.
   */
  setChannels(id: string, channelIds: string[]): Promise<SendingDomain | undefined>;
  /** Removes the domain, its name and its private keys in one commit; false when it did not exist. */
  delete(id: string): Promise<boolean>;
  /**
   * Makes `key` the domain's pending key (one commit with its private key); a pending key not yet
   * promoted is replaced and its private key deleted. Undefined for an unknown domain.
   */
  setPendingKey(id: string, key: NewDkimKey): Promise<SendingDomain | undefined>;
  /**
   * Gives the active ed25519 key `selector`, stored without one, its RSA companion; a conditional
   * update that changes nothing (and stores no key) when the active key was rotated meanwhile or
   * has a companion already. The domain as it is then; undefined for an unknown domain.
   */
  addRsaCompanion(id: string, selector: string, key: NewDkimKey): Promise<SendingDomain | undefined>;
  /**
   * Records a DNS check done at `at` (domain/sending-domain.ts applyCheck on the record as it is
   * in the commit): a promoted pending key retires the active one, whose private key goes in the
   * same commit. Undefined for an unknown (deleted meanwhile) domain.
   */
  recordCheck(id: string, results: CheckResults, at: string): Promise<SendingDomain | undefined>;
  /** The selectors of the private keys stored for the domain (active, companions, pending). */
  dkimSelectors(id: string): Promise<string[]>;
  /**
   * The domain a channel may send from: `domainName` (case, a root dot and U-labels normalized)
   * registered in the account and linked to the live channel; undefined otherwise. The caller
   * decides what `verified: false` means.
   */
  findSending(q: { accountId: string; channelId: string; domainName: string }): Promise<SendingDomainMatch | undefined>;
  /**
   * The account's domain's active DKIM key (named as in findSending), with its RSA companion while
   * the companion's record is verified; undefined without such a domain or stored key.
   */
  signingKey(q: { accountId: string; domainName: string }): Promise<SigningKey | undefined>;
  /** Ids of the domains the periodic re-check watches (verified, or verified once and now failing). */
  toRecheck(): Promise<string[]>;
}
