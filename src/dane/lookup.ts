/**
 * TLSA lookup for one MX host (RFC 7672 2.2.2), trusting the AD bit only when the operator
 * marks the configured resolvers as validating (dns.dnssecValidating, as Postfix's
 * smtp_dns_support_level=dnssec): an AD bit from a resolver that does not validate, or from
 * one across a network path we do not trust, proves nothing.
 *
 * Steps, for MX host H:
 *  1. Address records of H (A, then AAAA when A is empty), AD set in the query. Not validated
 *     → 'insecure': RFC 7672 2.2.2 does TLSA lookups only for hosts whose address records are
 *     secure, since an attacker who can forge the address can also send the client elsewhere.
 *     A failed lookup (SERVFAIL, timeout) → 'failed'. A validated CNAME chain gives the
 *     expanded name E.
 *  2. TLSA at _25._tcp.E (then _25._tcp.H if E has none, RFC 7672 2.2.2), AD set.
 *     SERVFAIL/other failure → 'failed' (defer); not AD → 'insecure'; validated NXDOMAIN or
 *     no TLSA in the answer → 'no-tlsa'; records → 'dane' when at least one is usable
 *     (DANE-TA/DANE-EE, RFC 7672 3.1.3), else 'unusable' (TLS mandatory, no authentication).
 *
 * Not checked here: whether the MX RRset itself was validated (RFC 7672 2.2.1 lets a client
 * use DANE for MX hosts from an insecure MX RRset, so a secure MX RRset is not required; it
 * would only add the next-hop domain to the reference identifiers, which we do not do; but see
 * secureMxHosts, for a host under DANE that the domain's MTA-STS policy does not name), and
 * the DNSSEC signatures themselves (that is the validating resolver's job; we only read AD).
 * Results are cached for the smallest TTL of the answers used (at most 300 s; 'insecure'
 * for 300 s); failures are not cached.
 */
import { normalizeName } from '../dns/resolver.js';
import { TLSA_TYPE, isUsable, parseTlsaRdata, type TlsaRecord } from './tlsa.js';
import { RCODE, querySecure, type DnsResource, type DnsServer, type SecureAnswer } from './secure-dns.js';
import type { DaneResult } from './result.js';

const TYPE = { A: 1, CNAME: 5, MX: 15, AAAA: 28 } as const;
const MAX_CACHE_SECONDS = 300;
const MAX_CACHE_ENTRIES = 10_000;

export interface DaneLookupOptions {
  /** Resolvers as host/port; see toDnsServer(). */
  servers: DnsServer[];
  /** dns.dnssecValidating: false turns DANE off entirely. */
  validating: boolean;
  timeoutMs: number;
  /** Monotonic milliseconds (default performance.now): a step of the wall clock must not keep an answer past its TTL. */
  now?: () => number;
}

type Step<T> = { ok: true; value: T; ttl: number } | { ok: false; result: DaneResult };

export class DaneLookup {
  private readonly cache = new Map<string, { expiresAt: number; result: DaneResult }>();
  private readonly inflight = new Map<string, Promise<DaneResult>>();
  private readonly now: () => number;

  constructor(private readonly opts: DaneLookupOptions) {
    this.now = opts.now ?? (() => performance.now());
  }

  /** Concurrent lookups for one host share one set of queries, as MtaStsPolicies.lookup does. */
  tlsaFor(mxHost: string): Promise<DaneResult> {
    if (!this.opts.validating) return Promise.resolve({ kind: 'off', reason: 'dns.dnssecValidating is false' });
    const host = normalizeName(mxHost);
    let pending = this.inflight.get(host);
    if (!pending) {
      pending = this.resolve(host);
      this.inflight.set(host, pending);
      const forget = (): void => {
        if (this.inflight.get(host) === pending) this.inflight.delete(host);
      };
      pending.then(forget, forget);
    }
    return pending;
  }

  /**
   * The MX host names of `domain` when its MX RRset is DNSSEC-validated ("secure", RFC 7672
   * 2.2.1), else none (unsigned, failed, DANE off). Delivery asks only when a host under DANE is
   * one the domain's MTA-STS policy does not name (sts-routing.ts); not cached.
   */
  async secureMxHosts(domain: string): Promise<string[]> {
    if (!this.opts.validating) return [];
    const answer = await this.ask(normalizeName(domain), TYPE.MX);
    if (answer.status !== 'answer' || answer.rcode !== RCODE.NOERROR || !answer.ad) return [];
    return answer.answers.flatMap((r) => (r.type === TYPE.MX && r.domain ? [r.domain] : []));
  }

  private async resolve(host: string): Promise<DaneResult> {
    const cached = this.cache.get(host);
    if (cached && cached.expiresAt > this.now()) return cached.result;
    this.cache.delete(host);

    const address = await this.secureAddress(host);
    if (!address.ok) {
      // Unsigned address records are an answer, cached as the TLSA 'insecure' case is, so each
      // attempt to an unsigned MX host does not ask for A (and AAAA) again; failures are not cached.
      if (address.result.kind === 'insecure') this.remember(host, address.result, MAX_CACHE_SECONDS);
      return address.result;
    }
    const bases = address.value === host ? [host] : [address.value, host];
    let outcome: Step<DaneResult> | undefined;
    for (const base of bases) {
      outcome = await this.tlsaAt(base, bases);
      if (!outcome.ok || outcome.value.kind !== 'no-tlsa') break;
    }
    const final = outcome as Step<DaneResult>;
    if (!final.ok) return final.result;
    this.remember(host, final.value, Math.min(address.ttl, final.ttl));
    return final.value;
  }

  /** Step 1: the validated address records of host; the CNAME-expanded name on success. */
  private async secureAddress(host: string): Promise<Step<string>> {
    let answer = await this.ask(host, TYPE.A);
    if (answer.status === 'answer' && answer.rcode === RCODE.NOERROR && !answer.answers.some((r) => r.type === TYPE.A)) {
      answer = await this.ask(host, TYPE.AAAA);
    }
    const failure = lookupFailure(answer, `address of ${host}`);
    if (failure) return { ok: false, result: failure };
    const a = answer as Extract<SecureAnswer, { status: 'answer' }>;
    if (!a.ad) return { ok: false, result: { kind: 'insecure', reason: `address records of ${host} not DNSSEC-validated` } };
    return { ok: true, value: expandedName(host, a.answers), ttl: minTtl(a.answers) };
  }

  /** Step 2: the TLSA RRset at _25._tcp.<base>. */
  private async tlsaAt(base: string, names: string[]): Promise<Step<DaneResult>> {
    const owner = `_25._tcp.${base}`;
    const answer = await this.ask(owner, TLSA_TYPE);
    const failure = lookupFailure(answer, `TLSA ${owner}`);
    if (failure) return { ok: false, result: failure };
    const a = answer as Extract<SecureAnswer, { status: 'answer' }>;
    if (!a.ad) return { ok: true, value: { kind: 'insecure', reason: `TLSA ${owner} not DNSSEC-validated` }, ttl: MAX_CACHE_SECONDS };
    const records = a.answers.filter((r) => r.type === TLSA_TYPE).map(tlsaOf).filter((r): r is TlsaRecord => r !== undefined);
    const ttl = minTtl(a.answers);
    if (records.length === 0) return { ok: true, value: { kind: 'no-tlsa', reason: `no TLSA records at ${owner} (validated)` }, ttl };
    if (!records.some(isUsable)) {
      return { ok: true, value: { kind: 'unusable', reason: `TLSA ${owner}: no DANE-TA/DANE-EE record usable`, records }, ttl };
    }
    return { ok: true, value: { kind: 'dane', records: records.filter(isUsable), tlsaBase: base, names }, ttl };
  }

  private ask(name: string, type: number): Promise<SecureAnswer> {
    return querySecure(this.opts.servers, name, type, this.opts.timeoutMs);
  }

  private remember(host: string, result: DaneResult, ttl: number): void {
    const seconds = Math.min(MAX_CACHE_SECONDS, ttl);
    if (seconds <= 0) return;
    this.cache.set(host, { expiresAt: this.now() + seconds * 1000, result });
    if (this.cache.size > MAX_CACHE_ENTRIES) this.cache.delete(this.cache.keys().next().value as string);
  }
}

/** NOERROR and NXDOMAIN are answers (RFC 7672 2.1.1); anything else is a lookup failure. */
function lookupFailure(answer: SecureAnswer, what: string): DaneResult | undefined {
  if (answer.status === 'error') return { kind: 'failed', reason: `${what}: ${answer.error}` };
  if (answer.rcode !== RCODE.NOERROR && answer.rcode !== RCODE.NXDOMAIN) {
    const name = answer.rcode === RCODE.SERVFAIL ? 'SERVFAIL (bogus or unreachable zone)' : `rcode ${answer.rcode}`;
    return { kind: 'failed', reason: `${what}: ${name}` };
  }
  return undefined;
}

/**
 * Follow the CNAME chain inside the answer (RFC 1034 3.6.2); the host itself when there is none.
 * The aliases are indexed once: an answer can hold thousands of records, searched at every hop.
 */
function expandedName(host: string, answers: DnsResource[]): string {
  const aliases = new Map<string, string>();
  for (const r of answers) {
    const owner = normalizeName(r.name);
    if (r.type === TYPE.CNAME && r.domain && !aliases.has(owner)) aliases.set(owner, normalizeName(r.domain));
  }
  let name = host;
  for (let hop = 0; hop < 8; hop++) {
    const target = aliases.get(name);
    if (target === undefined) return name;
    name = target;
  }
  return name;
}

function tlsaOf(resource: DnsResource): TlsaRecord | undefined {
  return Buffer.isBuffer(resource.data) ? parseTlsaRdata(resource.data) : undefined;
}

function minTtl(answers: DnsResource[]): number {
  return answers.length === 0 ? 60 : Math.min(...answers.map((r) => r.ttl));
}
