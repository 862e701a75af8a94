/**
 * One verification run: looks up every record a domain needs and says, per record, whether DNS
 * has it (`match`), lacks it or has something else (`mismatch`), or could not tell (`error`:
 * SERVFAIL, timeout... a temporary condition that must not mark anything failed).
 */
import { dkimRecordMatches } from '../domain/dkim-record.js';
import { publishedDmarc } from '../domain/dmarc-record.js';
import { mxPointsTo, sameHost, spfAuthorizes, type ExpectedRecord } from '../domain/return-path.js';
import type { CheckOutcome, CheckResults, DomainKey, LinkHostKind, SendingDomain } from '../domain/sending-domain.js';
import type { DnsAnswer, MxRecord } from '../dns/resolver.js';

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
 * DMARC (advisory): any one DMARC record at the host counts, and is reported as published, so
 * a domain with its own policy is never asked to replace it by ours.
 */
async function checkDmarc(dns: DomainDns, recommended: ExpectedRecord): Promise<{ record: ExpectedRecord; outcome: CheckOutcome }> {
  const answer = await dns.txt(recommended.host).catch((err: unknown): DnsAnswer<string[]> => ({ status: 'error', error: String(err) }));
  const published = answer.status === 'ok' ? publishedDmarc(answer.records) : undefined;
  if (published !== undefined) return { record: { ...recommended, value: published }, outcome: 'match' };
  return { record: recommended, outcome: answer.status === 'error' ? 'error' : 'mismatch' };
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
    checkDmarc(dns, expected.dmarc),
  ]);
  return {
    keys: Object.fromEntries(keys.map((k, i) => [k.selector, keyOutcomes[i]])),
    returnPath: returnPath.map((record, i) => ({ record, outcome: rpOutcomes[i] })),
    linkHosts: { tracking: { record: linkHosts.tracking, outcome: tracking }, unsubscribe: { record: linkHosts.unsubscribe, outcome: unsubscribe } },
    dmarc,
  };
}
