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
 *
 * Dual signing (RFC 8463 3): an ed25519 key comes with an RSA companion key of its own selector,
 * so receivers without ed25519 (Mail::DKIM as Debian 12 ships it, which SpamAssassin uses)
 * still find a signature they can verify. A key created with its companion counts as verified,
 * and a pending one is promoted, only once both records are: an ed25519 signature alone is no
 * DKIM at all to those receivers, and signing with an unpublished RSA key would add a failing
 * signature. An ed25519 key stored before companions existed gets one at its next check
 * (domains/service.ts); if that key had been verified, the companion is `advisory` (the domain
 * goes on sending while it is pending, and its signature is added once its record is verified).
 */
import type { DnsRecordType, ExpectedRecord } from './return-path.js';

/** The optional link-host records of a domain (link-hosts.ts); declared with the record that
 *  holds them, so link-hosts.ts depends on this file and not the other way round. */
export type LinkHostKind = 'tracking' | 'unsubscribe';

/** The DKIM key types a domain may have (RFC 6376 RSA, RFC 8463 ed25519): the config, the API schema and the rotate-key check use this list. */
export const DKIM_ALGORITHMS = ['rsa', 'ed25519'] as const;
export type DkimAlgorithm = (typeof DKIM_ALGORITHMS)[number];
export type DnsRecordStatus = 'pending' | 'verified' | 'failing' | 'failed';

export interface DnsRecordState {
  type: DnsRecordType;
  host: string;
  value: string;
  status: DnsRecordStatus;
  lastCheckedAt: string | null;
  /** What the last lookup of this value found (absent before the first one, and in records stored before it existed). */
  check?: RecordCheck;
}

/**
 * What one lookup of a record found: `match`; `missing` (no record of that type at the name:
 * NXDOMAIN or NODATA); `mismatch` (records there, none as expected; `found` holds them); or
 * `lookup_failed` (SERVFAIL, timeout: nothing concluded, the status is kept).
 */
export type CheckResult = 'match' | 'missing' | 'mismatch' | 'lookup_failed';

export interface RecordFinding {
  result: CheckResult;
  /** mismatch: the values DNS has at the name, capped (domains/checks.ts: DNS answers are untrusted). */
  found?: string[];
  /** Some values found were cut or left out by the cap. */
  foundTruncated?: true;
}

export interface RecordCheck extends RecordFinding {
  checkedAt: string;
}

/** A DKIM key as stored with its domain. The private key is stored apart (store/domains.ts). */
export interface DomainKey {
  selector: string;
  algorithm: DkimAlgorithm;
  createdAt: string;
  record: DnsRecordState;
  /** An ed25519 key's RSA companion (RFC 8463 3); absent for RSA keys and ed25519 keys stored before it existed. */
  rsaCompanion?: CompanionKey;
}

/** The RSA key that signs next to an ed25519 key; its private key is stored like the others. */
export interface CompanionKey {
  selector: string;
  createdAt: string;
  record: DnsRecordState;
  /** Added to a key verified without it: never needed for `verified`, signs once its record is verified. */
  advisory?: true;
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
  /**
   * Return-path records verified with earlier settings (another hostname or returnPathLabel) that
   * DNS still had at the last check, while the record of their type expected now is not verified:
   * they keep the domain verified (a settings change does not stop a live domain from sending).
   */
  previousReturnPath?: DnsRecordState[];
  /** The optional tracking and unsubscribe CNAMEs (domain/link-hosts.ts); absent in domains stored before 0.2 until their next check. */
  linkHosts?: Record<LinkHostKind, DnsRecordState>;
  /** The advisory `_dmarc` TXT (domain/dmarc-record.ts); absent until the domain's first check. */
  dmarc?: DnsRecordState;
  /**
   * The MX of the domain itself (domain/inbound-mx.ts), checked while the domain has inbound
   * routes (issue 33); absent until the first check with a route. Never part of `verified`: it
   * is about receiving, and sending does not need it.
   */
  inbound?: DnsRecordState;
}

export type CheckOutcome = 'match' | 'mismatch' | 'error';

/** A lookup's outcome alone, or with what it found (domains/checks.ts gives the latter, which is stored as the record's `check`). */
export type CheckFinding = CheckOutcome | RecordFinding;

export function outcomeOf(f: CheckFinding): CheckOutcome {
  if (typeof f === 'string') return f;
  return f.result === 'match' ? 'match' : f.result === 'lookup_failed' ? 'error' : 'mismatch';
}

/** What one verification run found: key records by selector, return-path records as expected now. */
export interface CheckResults {
  keys: Record<string, CheckFinding>;
  returnPath: Array<{ record: ExpectedRecord; outcome: CheckFinding }>;
  /** The domain's previousReturnPath records as the run found them (currentReturnPath's `replaces`). */
  previousReturnPath?: Array<{ record: ExpectedRecord; outcome: CheckFinding }>;
  linkHosts?: Record<LinkHostKind, { record: ExpectedRecord; outcome: CheckFinding }>;
  /** `record` holds the published DMARC record when one was found, else the recommended one. */
  dmarc?: { record: ExpectedRecord; outcome: CheckFinding };
  /** The inbound MX, looked up only while the domain has inbound routes. */
  inbound?: { record: ExpectedRecord; outcome: CheckFinding };
}

export const MAX_RETIRED_KEYS = 20;

export function newRecordState(r: ExpectedRecord): DnsRecordState {
  return { type: r.type, host: r.host, value: r.value, status: 'pending', lastCheckedAt: null };
}

/**
 * A record after a lookup: a lookup that did not conclude keeps status and lastCheckedAt (only
 * its `check` says it failed); `found` is kept for a mismatch only.
 */
export function nextRecordState(r: DnsRecordState, finding: CheckFinding | undefined, at: string): DnsRecordState {
  if (finding === undefined) return r;
  const outcome = outcomeOf(finding);
  const base = typeof finding === 'string' ? r : { ...r, check: { ...finding, checkedAt: at } };
  if (outcome === 'error') return base;
  if (outcome === 'match') return { ...base, status: 'verified', lastCheckedAt: at };
  return { ...base, status: wasVerified(r) ? 'failing' : 'failed', lastCheckedAt: at };
}

/** The record was verified at some point: it is verified now, or verified once and now failing. */
export function wasVerified(r: Pick<DnsRecordState, 'status'>): boolean {
  return r.status === 'verified' || r.status === 'failing';
}

/**
 * The active key is verified, and each return-path record is, or a record of its type verified
 * with earlier settings still was at the last check (previousReturnPath).
 */
export function isDomainVerified(d: Pick<SendingDomain, 'activeKey' | 'returnPath' | 'previousReturnPath'>): boolean {
  const previous = d.previousReturnPath ?? [];
  const covered = (r: DnsRecordState) => r.status === 'verified' || previous.some((p) => p.type === r.type && p.status === 'verified');
  return keyVerified(d.activeKey) && d.returnPath.length > 0 && d.returnPath.every(covered);
}

/**
 * The return-path records expected now (`expected`, from the current settings), each with the
 * state stored for that exact value (type, host, value) or pending when the value is new (a
 * setting changed since the last check). A record that is not verified `replaces` a verified one
 * of its type stored with other settings: the domain sends with that one until the new one is
 * found (isDomainVerified), and the next check looks both up.
 */
export function currentReturnPath(
  d: Pick<SendingDomain, 'returnPath' | 'previousReturnPath'>,
  expected: readonly ExpectedRecord[],
): Array<{ record: DnsRecordState; replaces?: DnsRecordState }> {
  const known = [...d.returnPath, ...(d.previousReturnPath ?? [])];
  return expected.map((e) => {
    const record = known.find((k) => sameRecord(k, e)) ?? newRecordState(e);
    const replaces = record.status === 'verified' ? undefined : known.find((k) => k.type === e.type && k.status === 'verified' && !sameRecord(k, e));
    return replaces ? { record, replaces } : { record };
  });
}

/** A link host's record for the value expected now: the stored state while the value is the same, else pending. */
export function currentRecord(stored: DnsRecordState | undefined, expected: ExpectedRecord): DnsRecordState {
  return stored && sameRecord(stored, expected) ? stored : newRecordState(expected);
}

/** The key's record is verified, and its companion's too unless the companion is advisory. */
function keyVerified(k: DomainKey): boolean {
  const c = k.rsaCompanion;
  return k.record.status === 'verified' && (!c || c.advisory === true || c.record.status === 'verified');
}

/** The companion that signs with its key: one whose record is verified (advisory or not). */
export function signingCompanion(k: DomainKey): CompanionKey | undefined {
  return k.rsaCompanion?.record.status === 'verified' ? k.rsaCompanion : undefined;
}

/** Was once verified, so the periodic re-check watches it (and can see it recover). */
export function needsRecheck(d: SendingDomain): boolean {
  const failing = [d.activeKey.record, ...(d.activeKey.rsaCompanion ? [d.activeKey.rsaCompanion.record] : []), ...d.returnPath];
  return d.verified || failing.some((r) => r.status === 'failing');
}

/** The selectors of a key and its companion, which are checked, promoted and retired together. */
export function keySelectors(k: DomainKey): string[] {
  return [k.selector, ...(k.rsaCompanion ? [k.rsaCompanion.selector] : [])];
}

function checkedKey(k: DomainKey, keys: CheckResults['keys'], at: string): DomainKey {
  const c = k.rsaCompanion;
  const record = nextRecordState(k.record, keys[k.selector], at);
  return { ...k, record, ...(c ? { rsaCompanion: { ...c, record: nextRecordState(c.record, keys[c.selector], at) } } : {}) };
}

function retiredOf(k: DomainKey, at: string): RetiredKey[] {
  const key: RetiredKey = { selector: k.selector, algorithm: k.algorithm, createdAt: k.createdAt, retiredAt: at };
  const c = k.rsaCompanion;
  return c ? [key, { selector: c.selector, algorithm: 'rsa', createdAt: c.createdAt, retiredAt: at }] : [key];
}

/**
 * Applies a verification run to a domain. Results for keys that are no longer the domain's
 * (rotated meanwhile) are ignored. Return-path records take the values expected now (the host
 * name may have been reconfigured), keeping the history of those whose value did not change.
 */
export function applyCheck(d: SendingDomain, results: CheckResults, at: string): { domain: SendingDomain; retiredKeys: RetiredKey[] } {
  let activeKey = checkedKey(d.activeKey, results.keys, at);
  let pendingKey = d.pendingKey && checkedKey(d.pendingKey, results.keys, at);
  let retiredKeys: RetiredKey[] = [];
  // A pending key with a companion is promoted once both records are verified (both sign from then on).
  if (pendingKey && keyVerified(pendingKey)) {
    retiredKeys = retiredOf(activeKey, at);
    activeKey = pendingKey;
    pendingKey = null;
  }
  const advance = (previous: DnsRecordState | undefined, { record, outcome }: { record: ExpectedRecord; outcome: CheckFinding }) =>
    nextRecordState(previous && sameRecord(previous, record) ? previous : newRecordState(record), outcome, at);
  const known = [...d.returnPath, ...(d.previousReturnPath ?? [])];
  const returnPath = results.returnPath.map((r) => advance(known.find((p) => sameRecord(p, r.record)), r));
  // A record of earlier settings is kept while DNS still has it and the new one of its type is not verified yet.
  const previousReturnPath = (results.previousReturnPath ?? [])
    .map((r) => advance(known.find((p) => sameRecord(p, r.record)), r))
    .filter((p) => p.status === 'verified' && !returnPath.some((r) => r.type === p.type && r.status === 'verified'));
  const linkHosts = results.linkHosts && {
    tracking: advance(d.linkHosts?.tracking, results.linkHosts.tracking),
    unsubscribe: advance(d.linkHosts?.unsubscribe, results.linkHosts.unsubscribe),
  };
  const dmarc = results.dmarc && nextDmarcState(d.dmarc, results.dmarc, at);
  const inbound = results.inbound && advance(d.inbound, results.inbound);
  const { previousReturnPath: _stale, ...rest } = d;
  const next: SendingDomain = {
    ...rest,
    activeKey,
    pendingKey,
    returnPath,
    ...(previousReturnPath.length > 0 ? { previousReturnPath } : {}),
    ...(linkHosts ? { linkHosts } : {}),
    ...(dmarc ? { dmarc } : {}),
    ...(inbound ? { inbound } : {}),
    retiredKeys: retiredKeys.length > 0 ? [...retiredKeys, ...d.retiredKeys].slice(0, MAX_RETIRED_KEYS) : d.retiredKeys,
    updatedAt: at,
  };
  next.verified = isDomainVerified(next);
  return { domain: next, retiredKeys };
}

/**
 * The DMARC record has one history per domain, whatever its value and host: the published record
 * while there is one (the domain's own, or its Organizational Domain's at that domain's _dmarc
 * host, RFC 7489 6.6.3), else the recommended one, so a published record that disappears is
 * `failing`. A check that could not conclude keeps the record as it was.
 */
function nextDmarcState(previous: DnsRecordState | undefined, r: { record: ExpectedRecord; outcome: CheckFinding }, at: string): DnsRecordState {
  if (outcomeOf(r.outcome) === 'error') return nextRecordState(previous ?? newRecordState(r.record), r.outcome, at);
  const base = previous ? { ...previous, host: r.record.host, value: r.record.value } : newRecordState(r.record);
  return nextRecordState(base, r.outcome, at);
}

/** The same record as expected now (type, host and value); a changed one starts over as pending. */
function sameRecord(r: DnsRecordState, e: ExpectedRecord): boolean {
  return r.type === e.type && r.host === e.host && r.value === e.value;
}
