/**
 * Sending domains: the stored record and the rules of DNS verification.
 *
 * Record statuses (DESIGN.md): `pending` until the first conclusive check; `verified` when the
 * record was found as expected; `failed` when checked and never found; `failing` when it had been
 * verified and is now missing or wrong. A check that could not conclude (a temporary DNS error)
 * changes nothing, not even lastCheckedAt. The domain is `verified` while its active DKIM key and
 * every return-path record are verified. The link hosts and the DMARC record are advisory: checked
 * and shown, never part of `verified` (a missing DMARC record does not stop sending).
 *
 * Key rotation: a pending key is checked with the others; once its record is found, it becomes
 * the active key and the previous key is retired (its private key is deleted by the store).
 */
import type { DnsRecordType, ExpectedRecord } from './return-path.js';

/** The optional link-host records of a domain (link-hosts.ts); declared with the record that
 *  holds them, so link-hosts.ts depends on this file and not the other way round. */
export type LinkHostKind = 'tracking' | 'unsubscribe';

export type DkimAlgorithm = 'rsa' | 'ed25519';
export type DnsRecordStatus = 'pending' | 'verified' | 'failing' | 'failed';

export interface DnsRecordState {
  type: DnsRecordType;
  host: string;
  value: string;
  status: DnsRecordStatus;
  lastCheckedAt: string | null;
}

/** A DKIM key as stored with its domain. The private key is stored apart (store/domains.ts). */
export interface DomainKey {
  selector: string;
  algorithm: DkimAlgorithm;
  createdAt: string;
  record: DnsRecordState;
}

export interface RetiredKey {
  selector: string;
  algorithm: DkimAlgorithm;
  createdAt: string;
  retiredAt: string;
}

export interface SendingDomain {
  id: string;
  accountId: string;
  /** Lower-case A-label form, without the root dot. */
  name: string;
  createdAt: string;
  updatedAt: string;
  verified: boolean;
  /** Channels that may send from this domain. */
  channelIds: string[];
  /** Channels that were linked and have been deleted since: listed as `deleted: true` until
   *  the next PATCH replaces the links. They may not send. */
  deletedChannelIds: string[];
  activeKey: DomainKey;
  pendingKey: DomainKey | null;
  /** Most recent first, at most MAX_RETIRED_KEYS; selectors are never reused. */
  retiredKeys: RetiredKey[];
  returnPath: DnsRecordState[];
  /** The optional tracking and unsubscribe CNAMEs (domain/link-hosts.ts); absent in domains stored before 0.2 until their next check. */
  linkHosts?: Record<LinkHostKind, DnsRecordState>;
  /** The advisory `_dmarc` TXT (domain/dmarc-record.ts); absent until the domain's first check. */
  dmarc?: DnsRecordState;
}

export type CheckOutcome = 'match' | 'mismatch' | 'error';

/** What one verification run found: key records by selector, return-path records as expected now. */
export interface CheckResults {
  keys: Record<string, CheckOutcome>;
  returnPath: Array<{ record: ExpectedRecord; outcome: CheckOutcome }>;
  linkHosts?: Record<LinkHostKind, { record: ExpectedRecord; outcome: CheckOutcome }>;
  /** `record` holds the published DMARC record when one was found, else the recommended one. */
  dmarc?: { record: ExpectedRecord; outcome: CheckOutcome };
}

export const MAX_RETIRED_KEYS = 20;

export function newRecordState(r: ExpectedRecord): DnsRecordState {
  return { type: r.type, host: r.host, value: r.value, status: 'pending', lastCheckedAt: null };
}

export function nextRecordState(r: DnsRecordState, outcome: CheckOutcome | undefined, at: string): DnsRecordState {
  if (outcome === undefined || outcome === 'error') return r;
  if (outcome === 'match') return { ...r, status: 'verified', lastCheckedAt: at };
  const wasVerified = r.status === 'verified' || r.status === 'failing';
  return { ...r, status: wasVerified ? 'failing' : 'failed', lastCheckedAt: at };
}

export function isDomainVerified(d: Pick<SendingDomain, 'activeKey' | 'returnPath'>): boolean {
  return d.activeKey.record.status === 'verified' && d.returnPath.length > 0 && d.returnPath.every((r) => r.status === 'verified');
}

/** Was once verified, so the periodic re-check watches it (and can see it recover). */
export function needsRecheck(d: SendingDomain): boolean {
  return d.verified || d.activeKey.record.status === 'failing' || d.returnPath.some((r) => r.status === 'failing');
}

/**
 * Applies a verification run to a domain. Results for keys that are no longer the domain's
 * (rotated meanwhile) are ignored. Return-path records take the values expected now (the host
 * name may have been reconfigured), keeping the history of those whose value did not change.
 */
export function applyCheck(d: SendingDomain, results: CheckResults, at: string): { domain: SendingDomain; retired: RetiredKey | null } {
  let activeKey = { ...d.activeKey, record: nextRecordState(d.activeKey.record, results.keys[d.activeKey.selector], at) };
  let pendingKey = d.pendingKey && { ...d.pendingKey, record: nextRecordState(d.pendingKey.record, results.keys[d.pendingKey.selector], at) };
  let retired: RetiredKey | null = null;
  if (pendingKey?.record.status === 'verified') {
    retired = { selector: activeKey.selector, algorithm: activeKey.algorithm, createdAt: activeKey.createdAt, retiredAt: at };
    activeKey = pendingKey;
    pendingKey = null;
  }
  const advance = (previous: DnsRecordState | undefined, { record, outcome }: { record: ExpectedRecord; outcome: CheckOutcome }) =>
    nextRecordState(previous && sameRecord(previous, record) ? previous : newRecordState(record), outcome, at);
  const returnPath = results.returnPath.map((r) => advance(d.returnPath.find((p) => sameRecord(p, r.record)), r));
  const linkHosts = results.linkHosts && {
    tracking: advance(d.linkHosts?.tracking, results.linkHosts.tracking),
    unsubscribe: advance(d.linkHosts?.unsubscribe, results.linkHosts.unsubscribe),
  };
  const dmarc = results.dmarc && nextDmarcState(d.dmarc, results.dmarc, at);
  const next: SendingDomain = {
    ...d,
    activeKey,
    pendingKey,
    returnPath,
    ...(linkHosts ? { linkHosts } : {}),
    ...(dmarc ? { dmarc } : {}),
    retiredKeys: retired ? [retired, ...d.retiredKeys].slice(0, MAX_RETIRED_KEYS) : d.retiredKeys,
    updatedAt: at,
  };
  next.verified = isDomainVerified(next);
  return { domain: next, retired };
}

/**
 * The DMARC record's history follows its host, not its value: the value is the published record
 * while there is one, else the recommended one, so a published record that disappears is
 * `failing`. A check that could not conclude keeps the record as it was.
 */
function nextDmarcState(previous: DnsRecordState | undefined, r: { record: ExpectedRecord; outcome: CheckOutcome }, at: string): DnsRecordState {
  if (r.outcome === 'error') return previous ?? newRecordState(r.record);
  const base = previous && previous.host === r.record.host ? { ...previous, value: r.record.value } : newRecordState(r.record);
  return nextRecordState(base, r.outcome, at);
}

/** The same record as expected now (type, host and value); a changed one starts over as pending. */
function sameRecord(r: DnsRecordState, e: ExpectedRecord): boolean {
  return r.type === e.type && r.host === e.host && r.value === e.value;
}
