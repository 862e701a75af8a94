/**
 * One verification run: looks up every record a domain needs and says, per record, whether DNS
 * has it (`match`), lacks it or has something else (`mismatch`), or could not tell (`error`:
 * SERVFAIL, timeout... a temporary condition that must not mark anything failed).
 */
import { dkimRecordMatches } from '../domain/dkim-record.js';
import { dmarcHost, isDmarcRecord, publishedDmarc } from '../domain/dmarc-record.js';
import { mxPointsTo, sameHost, spfAuthorizes, type ExpectedRecord } from '../domain/return-path.js';
import type { CheckOutcome, CheckResults, DomainKey, LinkHostKind, SendingDomain } from '../domain/sending-domain.js';
import type { DnsAnswer, MxRecord } from '../dns/resolver.js';
import { organizationalDomain } from './organizational-domain.js';

/** The lookups verification needs (DnsResolver has them). */
export interface DomainDns {
  txt(name: string): Promise<DnsAnswer<string[]>>;
  mx(name: string): Promise<DnsAnswer<MxRecord[]>>;
  cname(name: string): Promise<DnsAnswer<string>>;
}

function outcomeOf<T>(answer: DnsAnswer<T>, matches: (records: T) => boolean): CheckOutcome {
  if (answer.status === 'error') return 'error';
  return answer.status === 'ok' && matches(answer.records) ? 'match' : 'mismatch';
}

async function checkKey(dns: DomainDns, key: Pick<DomainKey, 'selector' | 'record'>): Promise<CheckOutcome> {
  const answer = await dns.txt(key.record.host);
  return outcomeOf(answer, (txt) => txt.some((t) => dkimRecordMatches(t, key.record.value)));
}

/** MX: our host is one of the exchanges; TXT: an SPF policy authorizing our host. */
async function checkReturnPath(dns: DomainDns, record: ExpectedRecord, hostname: string): Promise<CheckOutcome> {
  if (record.type === 'mx') return outcomeOf(await dns.mx(record.host), (mx) => mxPointsTo(mx, hostname));
  return outcomeOf(await dns.txt(record.host), (txt) => spfAuthorizes(txt, hostname));
}

/** A link host: its CNAME names the expected target (our public host). */
async function checkLinkHost(dns: DomainDns, record: ExpectedRecord): Promise<CheckOutcome> {
  return outcomeOf(await dns.cname(record.host), (target) => sameHost(target, record.value));
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
async function checkDmarc(dns: DomainDns, recommended: ExpectedRecord, domain: string): Promise<{ record: ExpectedRecord; outcome: CheckOutcome }> {
  const own = await dmarcAt(dns, recommended.host);
  const org = organizationalDomain(domain);
  const found = own.status === 'none' && org !== undefined && org !== domain ? await dmarcAt(dns, dmarcHost(org)) : own;
  if (found.status === 'one') return { record: { ...recommended, host: found.host, value: found.value }, outcome: 'match' };
  return { record: recommended, outcome: found.status === 'error' ? 'error' : 'mismatch' };
}

type DmarcAnswer = { status: 'one'; host: string; value: string } | { status: 'none' | 'several' | 'error' };

/** The DMARC records among the TXT records at `host` (RFC 7489 6.6.3 steps 1-2, 3-4). */
async function dmarcAt(dns: DomainDns, host: string): Promise<DmarcAnswer> {
  const answer = await dns.txt(host).catch((err: unknown): DnsAnswer<string[]> => ({ status: 'error', error: String(err) }));
  if (answer.status === 'error') return { status: 'error' };
  const records = answer.status === 'ok' ? answer.records : [];
  const value = publishedDmarc(records);
  if (value !== undefined) return { status: 'one', host, value };
  return { status: records.some(isDmarcRecord) ? 'several' : 'none' };
}

/**
 * Checks the domain's keys, the return-path records expected now (built for `hostname`), the
 * link hosts and the DMARC record.
 * All lookups run concurrently; a lookup that throws counts as a temporary error.
 */
export async function checkDomain(
  dns: DomainDns,
  d: SendingDomain,
  expected: { returnPath: ExpectedRecord[]; hostname: string; linkHosts: Record<LinkHostKind, ExpectedRecord>; dmarc: ExpectedRecord },
): Promise<CheckResults> {
  const { returnPath, hostname, linkHosts } = expected;
  const safe = (p: Promise<CheckOutcome>) => p.catch((): CheckOutcome => 'error');
  // An ed25519 key's RSA companion is checked like a key of its own (domain/sending-domain.ts).
  const keys = [d.activeKey, ...(d.pendingKey ? [d.pendingKey] : [])].flatMap((k) => [k, ...(k.rsaCompanion ? [k.rsaCompanion] : [])]);
  const [keyOutcomes, rpOutcomes, tracking, unsubscribe, dmarc] = await Promise.all([
    Promise.all(keys.map((k) => safe(checkKey(dns, k)))),
    Promise.all(returnPath.map((r) => safe(checkReturnPath(dns, r, hostname)))),
    safe(checkLinkHost(dns, linkHosts.tracking)),
    safe(checkLinkHost(dns, linkHosts.unsubscribe)),
    checkDmarc(dns, expected.dmarc, d.name),
  ]);
  return {
    keys: Object.fromEntries(keys.map((k, i) => [k.selector, keyOutcomes[i]])),
    returnPath: returnPath.map((record, i) => ({ record, outcome: rpOutcomes[i] })),
    linkHosts: { tracking: { record: linkHosts.tracking, outcome: tracking }, unsubscribe: { record: linkHosts.unsubscribe, outcome: unsubscribe } },
    dmarc,
  };
}
