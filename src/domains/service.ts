/**
 * The domain service: what needs more than one store write or anything outside the store —
 * creating a domain with a fresh DKIM key, rotating its key, and checking its records in DNS.
 * Also the reads of /domains and its access rules, so the route only parses and maps: writes
 * need an account-level key; a channel key sees only the domains linked to its channel; linked
 * channels must be live channels of the caller's account (channels/service.ts accessibleChannel).
 */
import { randomBytes } from 'node:crypto';
import type { Logger } from '../log/logger.js';
import { accessibleChannel } from '../channels/service.js';
import { requireAccountKey } from '../domain/access.js';
import { companionSelector, makeSelector } from '../domain/dkim-record.js';
import { dmarcRecord, dmarcWarnings } from '../domain/dmarc-record.js';
import { domainLimitExceeded, duplicateName, selectorsOf } from '../domain/domain-rules.js';
import { normalizeDomainName } from '../domain/domain-name.js';
import { AppError } from '../domain/errors.js';
import { linkHostRecords } from '../domain/link-hosts.js';
import { optionalEnumField } from '../domain/optional-body.js';
import type { PublicUrl } from '../domain/public-url.js';
import { linkHostWarnings, returnPathWarnings, type SetupWarning } from '../domain/setup-warnings.js';
import { returnPathRecords, type ExpectedRecord } from '../domain/return-path.js';
import { inboundMxRecord } from '../domain/inbound-mx.js';
import {
  currentRecord,
  currentReturnPath,
  DKIM_ALGORITHMS,
  newRecordState,
  outcomeOf,
  wasVerified,
  type DkimAlgorithm, type DnsRecordState, type DomainKey, type LinkHostKind, type SendingDomain } from '../domain/sending-domain.js';
import type { DeliveryType, Principal } from '../domain/types.js';
import { isUuid } from '../domain/uuid.js';
import type { DomainFilter, NewDkimKey } from '../store/port/domains.js';
import type { StorePort } from '../store/port/index.js';
import { checkDomain, type DomainDns } from './checks.js';
import { generateDkimKeyAsync, generateKeySet, type KeyGenerator } from './keygen.js';

export interface DomainSettings {
  /** Our mail host name (domains.mxHost, else hostname): the return-path and inbound MX target and the host SPF must authorize. */
  hostname: string;
  /** The return-path host is `<returnPathLabel>.<domain>`. */
  returnPathLabel: string;
  /** Link hosts `<trackingLabel>.<domain>` and `<unsubscribeLabel>.<domain>`, CNAMEs to publicUrl's host. */
  trackingLabel: string;
  unsubscribeLabel: string;
  publicUrl: PublicUrl;
  /** The rua of the recommended DMARC record; empty: the record has none. */
  dmarcReportAddress: string;
  defaultAlgorithm: DkimAlgorithm;
  maxPerAccount: number;
}

/** A domain's records with the current settings (DomainService.currentRecords). */
export interface CurrentRecords {
  returnPath: Array<{ record: DnsRecordState; replaces?: DnsRecordState }>;
  returnPathWarnings: SetupWarning[];
  linkHosts: Record<LinkHostKind, DnsRecordState>;
  linkHostWarnings: SetupWarning[];
  dmarc: DnsRecordState;
  dmarcWarnings: SetupWarning[];
  /** The inbound MX, while the domain has inbound routes (its warnings are returnPathWarnings: both name `hostname`). */
  inbound?: DnsRecordState;
}

export interface DomainServiceOptions {
  store: StorePort;
  dns: DomainDns;
  settings: DomainSettings;
  logger: Logger;
  /** Default: crypto.generateKeyPair on libuv's thread pool. */
  generateKey?: KeyGenerator;
  now?: () => Date;
}

export class DomainService {
  private readonly store: StorePort;
  private readonly dns: DomainDns;
  private readonly settings: DomainSettings;
  private readonly logger: Logger;
  private readonly generateKey: KeyGenerator;
  private readonly now: () => Date;

  constructor(opts: DomainServiceOptions) {
    this.store = opts.store;
    this.dns = opts.dns;
    this.settings = opts.settings;
    this.logger = opts.logger;
    this.generateKey = opts.generateKey ?? generateDkimKeyAsync;
    this.now = opts.now ?? (() => new Date());
  }

  /** The return-path records a domain needs with the current configuration. */
  expectedReturnPath(domain: string): ExpectedRecord[] {
    return returnPathRecords({ domain, label: this.settings.returnPathLabel, hostname: this.settings.hostname });
  }

  /** The optional link-host CNAMEs a domain may publish with the current configuration. */
  expectedLinkHosts(domain: string): Record<LinkHostKind, ExpectedRecord> {
    const { trackingLabel, unsubscribeLabel, publicUrl } = this.settings;
    return linkHostRecords({ domain, trackingLabel, unsubscribeLabel, publicUrl: publicUrl.value });
  }

  /** The MX mail for the domain needs once it has inbound routes (issue 33). */
  expectedInbound(domain: string): ExpectedRecord {
    return inboundMxRecord(domain, this.settings.hostname);
  }

  /** The recommended (advisory) DMARC record with the current configuration. */
  expectedDmarc(domain: string): ExpectedRecord {
    return dmarcRecord(domain, this.settings.dmarcReportAddress);
  }

  /**
   * The domain's DMARC record: the published one while a check found one (its own or its
   * Organizational Domain's), else the recommended one with the current report address, with the
   * status and check of the last lookup (which looks for any DMARC record, whatever our value).
   */
  dmarcState(d: SendingDomain): DnsRecordState {
    const recommended = this.expectedDmarc(d.name);
    if (!d.dmarc) return newRecordState(recommended);
    return wasVerified(d.dmarc) ? d.dmarc : { ...d.dmarc, host: recommended.host, value: recommended.value };
  }

  /**
   * The records of `d` as they are to be published with the current settings (hostname,
   * publicUrl, the labels, the DMARC report address), whenever they are read: a record keeps its
   * stored status and last check only while its value is unchanged (a changed one is pending,
   * `replaces` naming the verified return-path record the domain sends with meanwhile), and each
   * carries the warnings of the settings it depends on (domain/setup-warnings.ts). The inbound
   * MX is there while the domain has an inbound route (enabled or not).
   */
  async currentRecords(d: SendingDomain): Promise<CurrentRecords> {
    const { hostname, publicUrl, dmarcReportAddress } = this.settings;
    const routed = await this.store.inboundRoutes.anyOnDomain(d.id);
    const expectedLinks = this.expectedLinkHosts(d.name);
    const linkWarnings = linkHostWarnings({ hostname, linkTarget: new URL(publicUrl.value).hostname });
    const dmarc = this.dmarcState(d);
    return {
      returnPath: currentReturnPath(d, this.expectedReturnPath(d.name)),
      returnPathWarnings: returnPathWarnings(hostname),
      linkHosts: {
        tracking: currentRecord(d.linkHosts?.tracking, expectedLinks.tracking),
        unsubscribe: currentRecord(d.linkHosts?.unsubscribe, expectedLinks.unsubscribe),
      },
      linkHostWarnings: linkWarnings,
      dmarc,
      dmarcWarnings: dmarcWarnings(dmarc, dmarcReportAddress),
      ...(routed ? { inbound: currentRecord(d.inbound, this.expectedInbound(d.name)) } : {}),
    };
  }

  /**
   * Registers a domain with a new DKIM key (account-level keys only). The name is normalized
   * (IDNA) or refused with 422; the cheap refusals (duplicate name, limit) come before the key
   * generation; the store's create decides them again, atomically, in its commit.
   */
  async create(p: Principal, input: { name: string; channelIds?: readonly string[]; algorithm?: DkimAlgorithm }): Promise<SendingDomain> {
    requireAccountKey(p);
    const { accountId } = p;
    const name = domainName(input.name);
    const channelIds = await this.channelsToLink(p, input.channelIds);
    if (await this.store.domains.findByName(accountId, name)) throw duplicateName(name);
    const max = this.settings.maxPerAccount;
    if ((await this.store.domains.count(accountId)) >= max) throw domainLimitExceeded(max);
    const key = await this.newKey(input.algorithm ?? this.settings.defaultAlgorithm, new Set());
    const domain = await this.store.domains.create({
      accountId,
      name,
      channelIds,
      key,
      returnPath: this.expectedReturnPath(name),
      linkHosts: this.expectedLinkHosts(name),
      maxPerAccount: max,
    });
    this.logger.info({ domainId: domain.id, domain: name, selector: key.selector, algorithm: key.algorithm }, 'domain created');
    return domain;
  }

  /**
   * The domain a request names, if the principal may see it: unknown (or malformed) 404
   * not_found, another account's or one not linked to a channel key's channel 403.
   */
  async visibleTo(p: Principal, id: string): Promise<SendingDomain> {
    const d = isUuid(id) ? await this.store.domains.get(id.toLowerCase()) : undefined;
    if (!d) throw notFound(id);
    if (d.accountId !== p.accountId || (p.channelId && !d.channelIds.includes(p.channelId))) {
      throw new AppError('forbidden', 'The API key may not access this domain');
    }
    return d;
  }

  /** visibleTo, then the account-key rule: a channel key learns 404/403 as for a read first. */
  private async writableBy(p: Principal, id: string): Promise<SendingDomain> {
    const domain = await this.visibleTo(p, id);
    requireAccountKey(p);
    return domain;
  }

  list(filter: DomainFilter): Promise<{ results: SendingDomain[]; totalCount: number }> {
    return this.store.domains.list(filter);
  }

  /** Linked channels, live ones first; deleted ones stay listed until the next setChannels. */
  async linkedChannels(d: SendingDomain): Promise<Array<{ id: string; name: string; deliveryType: DeliveryType; deleted: boolean }>> {
    const records = await Promise.all([...d.channelIds, ...d.deletedChannelIds].map((id) => this.store.channels.getRecord(id)));
    return records.flatMap((c) => (c ? [{ id: c.id, name: c.name, deliveryType: c.deliveryType, deleted: Boolean(c.deletedAt) }] : []));
  }

  /**
   * Replaces the linked channels. Whether the domain is visible (404/403) comes before whether
   * the key may write it (403), and that before the channels named (404 channel_not_found, 403).
   */
  async setChannels(p: Principal, id: string, channelIds: readonly string[]): Promise<SendingDomain> {
    const domain = await this.writableBy(p, id);
    const updated = await this.store.domains.setChannels(domain.id, await this.channelsToLink(p, channelIds));
    if (!updated) throw notFound(domain.id);
    return updated;
  }

  async remove(p: Principal, id: string): Promise<void> {
    const domain = await this.writableBy(p, id);
    if (!(await this.store.domains.delete(domain.id))) throw notFound(domain.id);
  }

  /**
   * Makes a new pending key (replacing a pending key not yet promoted). `body` is the optional
   * rotate-key body ({dkimAlgorithm?}), checked after the access rules (422 validation_failed);
   * the algorithm defaults to the active key's. 404 not_found when the domain does not exist (any more).
   */
  async rotateKey(p: Principal, id: string, body: unknown): Promise<SendingDomain & { pendingKey: DomainKey }> {
    // writableBy read the record; nothing else awaits before the key is made, so it is still current.
    const d = await this.writableBy(p, id);
    const domainId = d.id;
    const algorithm = optionalEnumField(body, 'dkimAlgorithm', DKIM_ALGORITHMS);
    const key = await this.newKey(algorithm ?? d.activeKey.algorithm, selectorsOf(d));
    const updated = await this.store.domains.setPendingKey(domainId, key);
    if (!updated) throw notFound(domainId);
    this.logger.info({ domainId, domain: d.name, selector: key.selector, algorithm: key.algorithm }, 'domain key rotation started');
    const { pendingKey } = updated;
    if (!pendingKey) throw notFound(domainId);
    return { ...updated, pendingKey };
  }

  /** Looks the domain's records up in DNS and records the statuses (the periodic recheck). */
  async verify(domainId: string): Promise<SendingDomain | undefined> {
    return (await this.checkRecords(domainId))?.domain;
  }

  /**
   * The verify of the API: checks the records of a domain the principal may see (any key may).
   * 404 not_found when the domain does not exist (any more); `dnsError` as checkRecords.
   */
  async check(p: Principal, id: string): Promise<{ domain: SendingDomain; dnsError: boolean; failedHosts: string[] }> {
    const domain = await this.visibleTo(p, id);
    const checked = await this.checkRecords(domain.id);
    if (!checked) throw notFound(domain.id);
    return checked;
  }

  /**
   * Checks the records and records what was learnt; `dnsError`: a lookup failed temporarily (the
   * statuses of those records were kept, not checked), so the caller can say the check did not run;
   * `failedHosts` names them.
   */
  private async checkRecords(domainId: string): Promise<{ domain: SendingDomain; dnsError: boolean; failedHosts: string[] } | undefined> {
    const d = await this.withRsaCompanion(await this.store.domains.get(domainId));
    if (!d) return undefined;
    const expected = this.expectedReturnPath(d.name);
    const results = await checkDomain(this.dns, d, {
      returnPath: expected,
      previousReturnPath: currentReturnPath(d, expected).flatMap((r) => (r.replaces ? [r.replaces] : [])),
      linkHosts: this.expectedLinkHosts(d.name),
      dmarc: this.expectedDmarc(d.name),
      inbound: (await this.store.inboundRoutes.anyOnDomain(d.id)) ? this.expectedInbound(d.name) : undefined,
    });
    const updated = await this.store.domains.recordCheck(domainId, results, this.now().toISOString());
    if (!updated) return undefined;
    const checked = [...results.returnPath, ...(results.previousReturnPath ?? []), ...Object.values(results.linkHosts ?? {}), ...(results.dmarc ? [results.dmarc] : []), ...(results.inbound ? [results.inbound] : [])];
    const failedHosts = [
      ...Object.entries(results.keys).flatMap(([selector, f]) => (outcomeOf(f) === 'error' ? [`${selector}._domainkey.${d.name}`] : [])),
      ...checked.flatMap((r) => (outcomeOf(r.outcome) === 'error' ? [r.record.host] : [])),
    ];
    const dnsError = failedHosts.length > 0;
    this.logChanges(d, updated, dnsError);
    return { domain: updated, dnsError, failedHosts: [...new Set(failedHosts)] };
  }

  private logChanges(before: SendingDomain, after: SendingDomain, temporaryError: boolean): void {
    const log = { domainId: after.id, domain: after.name };
    if (temporaryError) this.logger.warn(log, 'domain check incomplete: temporary DNS error, statuses kept');
    if (before.activeKey.selector !== after.activeKey.selector) {
      this.logger.info({ ...log, selector: after.activeKey.selector, retired: before.activeKey.selector }, 'domain key rotated');
    }
    if (before.verified && !after.verified) this.logger.warn(log, 'domain verification lost');
    if (!before.verified && after.verified) this.logger.info(log, 'domain verified');
  }

  /**
   * Each id must name a live channel of the caller's account (404 channel_not_found, 403), read
   * one after another: the error names the first id that fails.
   */
  private async channelsToLink(p: Principal, ids: readonly string[] | undefined): Promise<string[]> {
    const linked: string[] = [];
    for (const id of new Set((ids ?? []).map((i) => i.toLowerCase()))) linked.push((await accessibleChannel(this.store, p, id)).id);
    return linked;
  }

  /** A new key; an ed25519 one with its RSA companion (domain/sending-domain.ts, dual signing). */
  private async newKey(algorithm: DkimAlgorithm, taken: ReadonlySet<string>): Promise<NewDkimKey> {
    const { key, rsaCompanion } = await generateKeySet(this.generateKey, algorithm);
    let selector: string;
    do selector = makeSelector(this.now(), randomBytes(2).toString('hex'));
    while (taken.has(selector));
    const companion = rsaCompanion && { selector: companionSelector(selector), algorithm: rsaCompanion.algorithm, privateKeyPem: rsaCompanion.privateKeyPem, dnsValue: rsaCompanion.dnsValue };
    return { selector, algorithm: key.algorithm, privateKeyPem: key.privateKeyPem, dnsValue: key.dnsValue, ...(companion ? { rsaCompanion: companion } : {}) };
  }

  /**
   * An active ed25519 key stored before companions existed gets its RSA companion here, at the
   * domain's next check (verify or the periodic re-check), rather than at the next rotation: the
   * domain answer lists the record to publish right away, and nothing signs with it before a
   * check finds it published (the store's domains.signingKey), so sending stays as it was.
   */
  private async withRsaCompanion(d: SendingDomain | undefined): Promise<SendingDomain | undefined> {
    if (!d || d.activeKey.algorithm !== 'ed25519' || d.activeKey.rsaCompanion) return d;
    const generated = await this.generateKey({ algorithm: 'rsa' });
    const selector = companionSelector(d.activeKey.selector);
    const updated = await this.store.domains.addRsaCompanion(d.id, d.activeKey.selector, { ...generated, selector });
    if (updated?.activeKey.rsaCompanion?.selector === selector) this.logger.info({ domainId: d.id, domain: d.name, selector }, 'domain key: RSA companion added');
    return updated;
  }
}

function notFound(id: string): AppError {
  return new AppError('not_found', `Domain ${id} does not exist`);
}

/** The name of a new domain, normalized (IDNA), or the 422 that says why it cannot be one. */
function domainName(raw: string): string {
  const name = normalizeDomainName(raw);
  if (!name.ok) {
    throw new AppError('validation_failed', 'The domain name cannot be registered', {
      errors: { '/name': [{ code: name.code, message: name.message }] },
    });
  }
  return name.name;
}
