/**
 * One verification run: looks up every record a domain needs and says, per record, whether DNS
 * has it (`match`), has no record of that type at the name (`missing`: NXDOMAIN or NODATA), has
 * other values (`mismatch`, with the values found), or could not tell (`lookup_failed`:
 * SERVFAIL, timeout... a temporary condition that must not mark anything failed).
 *
 * The values found come from whoever runs the zone, are stored with the domain and shown to the
 * user: at most MAX_FOUND of them, each cut at MAX_FOUND_CHARS (a TXT record may hold 64 KiB
 * over TCP, RFC 7766), with `foundTruncated` saying something was left out.
 */
import { dkimRecordMatches } from '../domain/dkim-record.js';
import { dmarcHost, isDmarcRecord, publishedDmarc } from '../domain/dmarc-record.js';
import { mxPointsTo, returnPathTarget, sameHost, spfAuthorizes, type ExpectedRecord } from '../domain/return-path.js';
import type { CheckResults, DomainKey, LinkHostKind, RecordFinding, SendingDomain } from '../domain/sending-domain.js';
import type { DnsAnswer, MxRecord } from '../dns/resolver.js';
import { organizationalDomain } from './organizational-domain.js';

/** The lookups verification needs (DnsResolver has them). */
export interface DomainDns {
  txt(name: string): Promise<DnsAnswer<string[]>>;
  mx(name: string): Promise<DnsAnswer<MxRecord[]>>;
  cname(name: string): Promise<DnsAnswer<string>>;
}

export const MAX_FOUND = 5;
export const MAX_FOUND_CHARS = 300;

/** At most MAX_FOUND values of at most MAX_FOUND_CHARS characters (an ellipsis marks a cut). */
export function cappedFound(values: readonly string[]): Pick<RecordFinding, 'found' | 'foundTruncated'> {
  const cut = values.slice(0, MAX_FOUND).map((v) => (v.length > MAX_FOUND_CHARS ? `${v.slice(0, MAX_FOUND_CHARS)}…` : v));
  const truncated = values.length > MAX_FOUND || values.some((v) => v.length > MAX_FOUND_CHARS);
  return { found: cut, ...(truncated ? { foundTruncated: true as const } : {}) };
}

function findingOf<T>(answer: DnsAnswer<T>, matches: (records: T) => boolean, values: (records: T) => string[]): RecordFinding {
  if (answer.status === 'error') return { result: 'lookup_failed' };
  if (answer.status !== 'ok') return { result: 'missing' };
  if (matches(answer.records)) return { result: 'match' };
  const found = values(answer.records);
  return found.length === 0 ? { result: 'missing' } : { result: 'mismatch', ...cappedFound(found) };
}

const lookupFailed = (): RecordFinding => ({ result: 'lookup_failed' });
const txtValues = (txt: string[]) => txt;
const mxValues = (mx: MxRecord[]) => mx.map((r) => `${r.priority} ${r.exchange}`);

async function checkKey(dns: DomainDns, key: Pick<DomainKey, 'selector' | 'record'>): Promise<RecordFinding> {
  const answer = await dns.txt(key.record.host);
  return findingOf(answer, (txt) => txt.some((t) => dkimRecordMatches(t, key.record.value)), txtValues);
}

/** MX: the record's host is one of the exchanges; TXT: an SPF policy authorizing it (a record of earlier settings names its own host). */
async function checkReturnPath(dns: DomainDns, record: ExpectedRecord): Promise<RecordFinding> {
  const hostname = returnPathTarget(record);
  if (record.type === 'mx') return findingOf(await dns.mx(record.host), (mx) => mxPointsTo(mx, hostname), mxValues);
  return findingOf(await dns.txt(record.host), (txt) => spfAuthorizes(txt, hostname), txtValues);
}

/** A link host: its CNAME names the expected target (our public host). */
async function checkLinkHost(dns: DomainDns, record: ExpectedRecord): Promise<RecordFinding> {
  return findingOf(await dns.cname(record.host), (target) => sameHost(target, record.value), (target) => [target]);
}

/**
 * DMARC (advisory), found as a receiver finds it (RFC 7489 6.6.3): the TXT records at
 * `_dmarc.<domain>` that are DMARC records (6.6.3 steps 1-2); only when there are none, those at
 * `_dmarc.<Organizational Domain>` (steps 3-4; organizational-domain.ts). Exactly one record
 * counts (step 5: more than one, and receivers apply no DMARC). The one found is reported as
 * published, with its host, so the answer names the record that applies and a domain with its own
 * policy (or its organization's) is never asked to replace it by ours. `p=none` or `p=reject`
 * alike: the record is there (advisory; our DKIM d= is the From domain, so it aligns either way).
 * A lookup that could not conclude (SERVFAIL, timeout) is an error, never a fall-back.
 */
async function checkDmarc(dns: DomainDns, recommended: ExpectedRecord, domain: string): Promise<{ record: ExpectedRecord; outcome: RecordFinding }> {
  const own = await dmarcAt(dns, recommended.host);
  const org = organizationalDomain(domain);
  const found = own.status === 'none' && org !== undefined && org !== domain ? await dmarcAt(dns, dmarcHost(org)) : own;
  if (found.status === 'one') return { record: { ...recommended, host: found.host, value: found.value }, outcome: { result: 'match' } };
  if (found.status === 'several') return { record: recommended, outcome: { result: 'mismatch', ...cappedFound(found.values) } };
  return { record: recommended, outcome: { result: found.status === 'error' ? 'lookup_failed' : 'missing' } };
}

type DmarcAnswer = { status: 'one'; host: string; value: string } | { status: 'several'; values: string[] } | { status: 'none' | 'error' };

/** The DMARC records among the TXT records at `host` (RFC 7489 6.6.3 steps 1-2, 3-4). */
async function dmarcAt(dns: DomainDns, host: string): Promise<DmarcAnswer> {
  const answer = await dns.txt(host).catch((err: unknown): DnsAnswer<string[]> => ({ status: 'error', error: String(err) }));
  if (answer.status === 'error') return { status: 'error' };
  const records = answer.status === 'ok' ? answer.records : [];
  const value = publishedDmarc(records);
  if (value !== undefined) return { status: 'one', host, value };
  const several = records.filter(isDmarcRecord);
  return several.length > 0 ? { status: 'several', values: several } : { status: 'none' };
}

/**
 * Checks the domain's keys, the return-path records expected now and those of earlier settings
 * that still keep the domain verified (`previousReturnPath`), the link hosts, the DMARC record and,
 * while the domain has inbound routes, its inbound MX.
 * All lookups run concurrently; a lookup that throws counts as a temporary error.
 */
export async function checkDomain(
  dns: DomainDns,
  d: SendingDomain,
  expected: { returnPath: ExpectedRecord[]; previousReturnPath?: ExpectedRecord[]; linkHosts: Record<LinkHostKind, ExpectedRecord>; dmarc: ExpectedRecord; inbound?: ExpectedRecord },
): Promise<CheckResults> {
  const { returnPath, linkHosts } = expected;
  const previous = expected.previousReturnPath ?? [];
  const safe = (p: Promise<RecordFinding>) => p.catch(lookupFailed);
  // An ed25519 key's RSA companion is checked like a key of its own (domain/sending-domain.ts).
  const keys = [d.activeKey, ...(d.pendingKey ? [d.pendingKey] : [])].flatMap((k) => [k, ...(k.rsaCompanion ? [k.rsaCompanion] : [])]);
  const inbound = expected.inbound;
  const [keyOutcomes, rpOutcomes, previousOutcomes, tracking, unsubscribe, dmarc, inboundOutcome] = await Promise.all([
    Promise.all(keys.map((k) => safe(checkKey(dns, k)))),
    Promise.all(returnPath.map((r) => safe(checkReturnPath(dns, r)))),
    Promise.all(previous.map((r) => safe(checkReturnPath(dns, r)))),
    safe(checkLinkHost(dns, linkHosts.tracking)),
    safe(checkLinkHost(dns, linkHosts.unsubscribe)),
    checkDmarc(dns, expected.dmarc, d.name),
    // The inbound MX is checked as the return path's MX is: one exchange names our host.
    inbound ? safe(checkReturnPath(dns, inbound)) : undefined,
  ]);
  return {
    keys: Object.fromEntries(keys.map((k, i) => [k.selector, keyOutcomes[i]])),
    returnPath: returnPath.map((record, i) => ({ record, outcome: rpOutcomes[i] })),
    ...(previous.length > 0 ? { previousReturnPath: previous.map((record, i) => ({ record, outcome: previousOutcomes[i] })) } : {}),
    linkHosts: { tracking: { record: linkHosts.tracking, outcome: tracking }, unsubscribe: { record: linkHosts.unsubscribe, outcome: unsubscribe } },
    dmarc,
    ...(inbound && inboundOutcome ? { inbound: { record: inbound, outcome: inboundOutcome } } : {}),
  };
}
