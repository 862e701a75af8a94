/**
 * DNS lookups for the MTA: MX for routing, A/AAAA for connecting, TXT for SPF/DKIM/DMARC,
 * CNAME where a caller needs to see an alias.
 *
 * The one thing this module must get right is the *kind* of answer, because each kind leads to
 * a different action:
 *  - 'nxdomain' : the name does not exist — a permanent fact (bounce, RFC 5321 §5.1 "no such
 *                 domain"; SPF "none").
 *  - 'nodata'   : the name exists but has no records of this type — for MX this triggers the
 *                 implicit MX fallback to the A/AAAA of the domain itself (RFC 5321 §5.1).
 *  - 'error'    : SERVFAIL, REFUSED, timeout, cancelled… — a temporary condition: the message
 *                 must be deferred and retried, never bounced (RFC 5321 §4.5.4.1; SPF/DMARC
 *                 "temperror", RFC 7208 §2.6.6).
 *  - 'ok'       : records. An MX list that is exactly one "0 ." is a null MX: the domain
 *                 accepts no mail (RFC 7505) — see isNullMx().
 *
 * Transport: node's dns.promises.Resolver (c-ares), pointed at explicit servers when configured
 * (tests run a DNS server on loopback; see POSTRIDER_DNS_SERVERS). We deliberately do not send
 * queries ourselves: c-ares already does random IDs and source ports (RFC 5452), retries and
 * server failover, and — crucially — the fallback to TCP when an answer is truncated (TC=1;
 * c-ares sends no EDNS, so every answer above 512 bytes, e.g. any 2048-bit DKIM key, arrives
 * over TCP). A hand-rolled UDP-only client would silently break on exactly those records.
 * The price is that node reports TTLs only for A/AAAA; MX/TXT/CNAME answers are cached for a
 * fixed UNREPORTED_TTL_SECONDS (300 s), and negative answers for NEGATIVE_TTL_SECONDS because
 * node does not expose the SOA minimum (RFC 2308 §5).
 *
 * Kept as our own wrapper, not replaced by a resolver package: the packages either send the
 * queries themselves (dns2: no TCP fallback, so the truncated DKIM answers above are lost) or
 * cache only address lookups (cacheable-lookup); none maps answers to these four kinds, which is
 * what decides between bounce, fallback and retry.
 */
import dns from 'node:dns';
import net from 'node:net';
import { utf8OfBinary } from '../domain/binary-text.js';

export type DnsAnswer<T> =
  | { status: 'ok'; records: T; /** seconds this answer remains valid in the cache */ ttl: number }
  | { status: 'nxdomain' }
  | { status: 'nodata' }
  | { status: 'error'; error: string };

export interface MxRecord {
  /** Host name without trailing dot; '' for the root name of a null MX (RFC 7505). */
  exchange: string;
  priority: number;
}

export interface DnsResolverOptions {
  /** 'ip:port', '[ipv6]:port' or 'ip'. Empty or undefined: the system's servers (/etc/resolv.conf). */
  servers?: string[];
  /**
   * Initial per-attempt timeout in ms. c-ares doubles it on each retry round and only checks
   * timers periodically, so the worst case is roughly timeoutMs * (2^tries) — keep both small.
   */
  timeoutMs?: number;
  /** Attempts per server (c-ares "tries"). */
  tries?: number;
  /** Cache bound; the oldest entry is evicted first. 0 disables caching. */
  cacheMaxEntries?: number;
  /** Clock in milliseconds since the epoch; injectable so tests can expire cache entries. */
  now?: () => number;
}

/** RFC 1035 §3.2.1 lets a TTL be up to 2^31-1 s; we never trust an answer for more than an hour. */
export const MAX_TTL_SECONDS = 3600;
/**
 * TTL 0 means "do not cache" (RFC 1035 §3.2.1). A few seconds still collapses the burst of
 * identical lookups one delivery run makes (every recipient at a domain) into one query.
 */
export const MIN_TTL_SECONDS = 5;
/** NXDOMAIN/NODATA lifetime: RFC 2308 §5 says use the SOA minimum, which node does not expose. */
export const NEGATIVE_TTL_SECONDS = 60;
/** TTL assumed for MX/TXT/CNAME, whose TTL node's resolver does not report. */
export const UNREPORTED_TTL_SECONDS = 300;

/**
 * What one answer may hand on. A DNS message over TCP carries up to 64 KiB (RFC 1035 4.2.2), so
 * thousands of MX or address records, all chosen by the domain delivery is asked to reach. Real
 * domains publish a handful; delivery tries at most MAX_MX_HOSTS (delivery/mx.ts) hosts, and
 * every MX name becomes part of the domain's site key (delivery/sites.ts), every address a
 * connection target (Postfix tries 5 addresses per delivery, smtp_mx_address_limit).
 */
export const MAX_MX_RECORDS = 50;
/** Addresses kept of one A or AAAA answer; see MAX_MX_RECORDS. */
export const MAX_ADDRESSES = 32;

const DEFAULT_TIMEOUT_MS = 2000;
const DEFAULT_TRIES = 2;
const DEFAULT_CACHE_MAX_ENTRIES = 10_000;

/** A record type, or `TXT:<kind>` for a parsed TXT answer (txtParsed). */
type RecordType = 'A' | 'AAAA' | 'MX' | 'TXT' | 'CNAME' | 'PTR' | `TXT:${string}`;

interface CacheEntry {
  expiresAt: number;
  answer: DnsAnswer<unknown>;
}

/** What a fetcher returns on success; ttl undefined = node did not report one. */
interface Fetched<T> {
  records: T;
  ttl: number | undefined;
  empty: boolean;
}

export class DnsResolver {
  private readonly servers: string[];
  private readonly timeoutMs: number;
  private readonly tries: number;
  private readonly cacheMaxEntries: number;
  private readonly now: () => number;
  /** Map keeps insertion order, which is exactly the "evict oldest" order we need. */
  private readonly cache = new Map<string, CacheEntry>();
  /** Concurrent identical lookups share one query (many recipients, one domain). */
  private readonly inflight = new Map<string, Promise<DnsAnswer<unknown>>>();
  private resolver: dns.promises.Resolver | undefined;
  private started = false;
  /** Bumped by stop(): answers to queries from an earlier generation are not cached. */
  private generation = 0;

  constructor(opts: DnsResolverOptions = {}) {
    // Validate now so a bad POSTRIDER_DNS_SERVERS fails at startup, not at the first delivery.
    this.servers = parseServers(opts.servers ?? []);
    this.timeoutMs = positiveInt(opts.timeoutMs ?? DEFAULT_TIMEOUT_MS, 'timeoutMs');
    this.tries = positiveInt(opts.tries ?? DEFAULT_TRIES, 'tries');
    const max = opts.cacheMaxEntries ?? DEFAULT_CACHE_MAX_ENTRIES;
    if (!Number.isInteger(max) || max < 0) throw new Error(`cacheMaxEntries must be a non-negative integer, got ${max}`);
    this.cacheMaxEntries = max;
    this.now = opts.now ?? Date.now;
  }

  start(): void {
    if (this.resolver) return;
    const resolver = new dns.promises.Resolver({ timeout: this.timeoutMs, tries: this.tries });
    // Without setServers the c-ares channel uses the system configuration.
    if (this.servers.length > 0) resolver.setServers(this.servers);
    this.resolver = resolver;
    this.started = true;
  }

  /** Cancels every in-flight query: their callers get {status: 'error', error: 'cancelled'}. */
  stop(): void {
    this.generation++;
    this.inflight.clear();
    const resolver = this.resolver;
    this.resolver = undefined;
    resolver?.cancel();
  }

  /** The servers in use (normalized), or [] when the system's are used. */
  configuredServers(): string[] {
    return [...this.servers];
  }

  /** Drop every cached answer (e.g. after an operator fixed a DNS record). */
  clearCache(): void {
    this.cache.clear();
  }

  /**
   * Each TXT record as one string: the character-strings a record is split into (at most 255
   * bytes each, RFC 1035 §3.3.14) are concatenated without separator, as SPF (RFC 7208 §3.3)
   * and DKIM (RFC 6376 §3.6.2.2) require. Separate records stay separate values.
   */
  txt(name: string): Promise<DnsAnswer<string[]>> {
    return this.lookup('TXT', name, cloneStrings, async (r, n) => {
      const records = (await r.resolveTxt(n)).map(joinCharacterStrings);
      return { records, ttl: undefined, empty: records.length === 0 };
    });
  }

  /**
   * The TXT records at `name` as `parse` reads them, parsed once per DNS answer: the cache keeps
   * the parsed value, not the strings, so a caller that asks before every delivery attempt (the
   * `_mta-sts` record, mta-sts/cache.ts) neither parses nor holds the recipient domain's text
   * again until the answer expires. `kind` names the reading in the cache key: two readings of
   * one name are two entries (and two queries). The value is handed out as is, so it must be
   * immutable (a string, null, a frozen object).
   */
  txtParsed<T>(name: string, kind: string, parse: (records: readonly string[]) => T): Promise<DnsAnswer<T>> {
    return this.lookup(`TXT:${kind}`, name, (v) => v, async (r, n) => {
      const records = (await r.resolveTxt(n)).map(joinCharacterStrings);
      return { records: parse(records), ttl: undefined, empty: records.length === 0 };
    });
  }

  /**
   * MX records sorted by ascending priority (RFC 5321 §5.1). Equal priorities keep server order:
   * the caller must randomize among them when delivering. The null MX "0 ." comes back as
   * {exchange: '', priority: 0}. At most MAX_MX_RECORDS, the most preferred.
   */
  mx(name: string): Promise<DnsAnswer<MxRecord[]>> {
    return this.lookup('MX', name, cloneMx, async (r, n) => {
      const records = (await r.resolveMx(n))
        .map((mx) => ({ exchange: normalizeName(mx.exchange), priority: mx.priority }))
        .sort((x, y) => x.priority - y.priority)
        .slice(0, MAX_MX_RECORDS);
      return { records, ttl: undefined, empty: records.length === 0 };
    });
  }

  /**
   * IPv4 addresses, at most MAX_ADDRESSES, in the server's order; the TTL is the smallest of the
   * records' (RFC 2181 §5.2: one RRset, one TTL).
   */
  a(name: string): Promise<DnsAnswer<string[]>> {
    return this.lookup('A', name, cloneStrings, async (r, n) => addresses(await r.resolve4(n, { ttl: true })));
  }

  /** IPv6 addresses, as a(). */
  aaaa(name: string): Promise<DnsAnswer<string[]>> {
    return this.lookup('AAAA', name, cloneStrings, async (r, n) => addresses(await r.resolve6(n, { ttl: true })));
  }

  /** The canonical name this alias points to (a name has at most one CNAME, RFC 2181 §10.1). */
  cname(name: string): Promise<DnsAnswer<string>> {
    return this.lookup('CNAME', name, (s) => s, async (r, n) => {
      const targets = await r.resolveCname(n);
      return { records: normalizeName(targets[0] ?? ''), ttl: undefined, empty: targets.length === 0 };
    });
  }

  /**
   * The names an address's PTR records give (reverse lookup under in-addr.arpa or ip6.arpa,
   * RFC 1035 3.5, RFC 3596 2.5), lowercased, without the trailing dot.
   */
  ptr(address: string): Promise<DnsAnswer<string[]>> {
    return this.lookup('PTR', reverseName(address), cloneStrings, async (r, n) => {
      const records = (await r.resolvePtr(n)).map(normalizeName);
      return { records, ttl: undefined, empty: records.length === 0 };
    });
  }

  private async lookup<T>(
    type: RecordType,
    rawName: string,
    clone: (records: T) => T,
    fetch: (resolver: dns.promises.Resolver, name: string) => Promise<Fetched<T>>,
  ): Promise<DnsAnswer<T>> {
    if (!this.started) throw new Error('DnsResolver.start() has not been called');
    const name = normalizeName(rawName);
    const key = `${type} ${name}`;

    const cached = this.cache.get(key);
    if (cached) {
      const remainingMs = cached.expiresAt - this.now();
      if (remainingMs > 0) return copyAnswer(cached.answer as DnsAnswer<T>, clone, Math.ceil(remainingMs / 1000));
      this.cache.delete(key);
    }

    const resolver = this.resolver;
    // Stopped: a temporary condition from the caller's point of view (defer, don't bounce).
    if (!resolver) return { status: 'error', error: 'cancelled: resolver stopped' };

    let pending = this.inflight.get(key) as Promise<DnsAnswer<T>> | undefined;
    if (!pending) {
      const query = this.query(resolver, key, name, fetch);
      pending = query;
      this.inflight.set(key, query);
      // Remove only our own entry: stop() + a new query may have replaced it meanwhile.
      void query.finally(() => {
        if (this.inflight.get(key) === query) this.inflight.delete(key);
      });
    }
    const answer = await pending;
    return copyAnswer(answer, clone, answer.status === 'ok' ? answer.ttl : 0);
  }

  private async query<T>(
    resolver: dns.promises.Resolver,
    key: string,
    name: string,
    fetch: (resolver: dns.promises.Resolver, name: string) => Promise<Fetched<T>>,
  ): Promise<DnsAnswer<T>> {
    const generation = this.generation;
    let answer: DnsAnswer<T>;
    let cacheSeconds: number;
    try {
      const fetched = await fetch(resolver, name);
      if (fetched.empty) {
        // c-ares reports an empty answer as ENODATA; this only guards against a future change.
        answer = { status: 'nodata' };
        cacheSeconds = NEGATIVE_TTL_SECONDS;
      } else {
        cacheSeconds = clampTtl(fetched.ttl ?? UNREPORTED_TTL_SECONDS);
        answer = { status: 'ok', records: fetched.records, ttl: cacheSeconds };
      }
    } catch (err) {
      answer = classifyError(err);
      // Negative answers are facts about the zone and may be cached (RFC 2308); failures are
      // about the path to the zone and must be retried on the next lookup.
      cacheSeconds = answer.status === 'error' ? 0 : NEGATIVE_TTL_SECONDS;
    }
    if (cacheSeconds > 0 && generation === this.generation) this.remember(key, answer, cacheSeconds);
    return answer;
  }

  private remember(key: string, answer: DnsAnswer<unknown>, seconds: number): void {
    if (this.cacheMaxEntries === 0) return;
    this.cache.delete(key); // re-insert at the young end
    this.cache.set(key, { expiresAt: this.now() + seconds * 1000, answer });
    while (this.cache.size > this.cacheMaxEntries) {
      const oldest = this.cache.keys().next().value as string;
      this.cache.delete(oldest);
    }
  }
}

/** True when the MX answer is a null MX: the domain explicitly accepts no mail (RFC 7505 §3). */
export function isNullMx(records: readonly MxRecord[]): boolean {
  return records.length === 1 && records[0].exchange === '';
}

/**
 * Validate and normalize a DNS server list: 'ip', 'ip:port', '[ipv6]:port', '[ipv6]' or a bare
 * IPv6 address (which cannot carry a port without brackets — '::1:53' is an address). Host
 * names are refused: resolving the resolver needs a resolver. Blank entries are skipped, so an
 * empty POSTRIDER_DNS_SERVERS ('' split on ',') means "system servers".
 * Output is in the syntax node's Resolver.setServers() accepts.
 */
export function parseServers(list: readonly string[]): string[] {
  const servers: string[] = [];
  for (const raw of list) {
    const entry = raw.trim();
    if (entry !== '') servers.push(parseServer(entry));
  }
  return servers;
}

function parseServer(entry: string): string {
  const bad = (why: string) =>
    new Error(`invalid DNS server "${entry}": ${why} (expected ip, ip:port or [ipv6]:port)`);
  const checkPort = (port: string): string => {
    if (!/^\d{1,5}$/.test(port) || Number(port) < 1 || Number(port) > 65535) throw bad(`port "${port}" is not 1-65535`);
    return String(Number(port));
  };

  if (entry.startsWith('[')) {
    const m = /^\[([^\]]*)\](?::(.*))?$/.exec(entry);
    if (!m) throw bad('malformed [ipv6]:port');
    if (!net.isIPv6(m[1])) throw bad(`"${m[1]}" is not an IPv6 address`);
    return m[2] === undefined ? m[1] : `[${m[1]}]:${checkPort(m[2])}`;
  }
  if (net.isIPv6(entry)) return entry;

  const colon = entry.indexOf(':');
  const host = colon === -1 ? entry : entry.slice(0, colon);
  if (!net.isIPv4(host)) {
    throw bad(entry.split(':').length > 2 ? 'an IPv6 address with a port needs brackets' : `"${host}" is not an IP address`);
  }
  return colon === -1 ? host : `${host}:${checkPort(entry.slice(colon + 1))}`;
}

/** Lower-case (RFC 4343: names compare case-insensitively) and drop the root dot. */
export function normalizeName(name: string): string {
  const lower = name.trim().toLowerCase();
  return lower.endsWith('.') ? lower.slice(0, -1) : lower;
}

function clampTtl(ttl: number): number {
  return Math.min(MAX_TTL_SECONDS, Math.max(MIN_TTL_SECONDS, Math.floor(ttl)));
}

function addresses(all: { address: string; ttl: number }[]): Fetched<string[]> {
  const records = all.slice(0, MAX_ADDRESSES);
  return {
    records: records.map((r) => r.address),
    ttl: records.length > 0 ? Math.min(...records.map((r) => r.ttl)) : undefined,
    empty: records.length === 0,
  };
}

/** Map node's resolver error codes (dns.NOTFOUND etc.) to answer kinds. */
function classifyError(err: unknown): DnsAnswer<never> {
  const code = typeof err === 'object' && err !== null ? (err as { code?: unknown }).code : undefined;
  switch (code) {
    case dns.NOTFOUND: // rcode 3, NXDOMAIN
      return { status: 'nxdomain' };
    case dns.NODATA: // NOERROR with no records of the type
      return { status: 'nodata' };
    case dns.SERVFAIL:
      return { status: 'error', error: 'SERVFAIL' };
    case dns.REFUSED:
      return { status: 'error', error: 'REFUSED' };
    case dns.TIMEOUT:
      return { status: 'error', error: 'timeout' };
    case dns.CONNREFUSED:
      return { status: 'error', error: 'connection refused' };
    case dns.CANCELLED:
      return { status: 'error', error: 'cancelled' };
    default: {
      // EBADRESP, EFORMERR, ENOTIMP, EBADNAME, EOF…: all treated as temporary. Even EBADNAME:
      // deferring a message with an unresolvable name costs a retry, bouncing on a local
      // glitch would lose mail.
      const message = err instanceof Error ? err.message : String(err);
      return { status: 'error', error: typeof code === 'string' ? `${code}: ${message}` : message };
    }
  }
}

/**
 * Join one TXT record's character-strings. Node hands each one over decoded as latin1 (one
 * char per byte), so non-ASCII UTF-8 text arrives as mojibake, and a multi-byte character may
 * even straddle two strings. Joining first and then re-reading the bytes as UTF-8 fixes both.
 * Bytes that are not valid UTF-8 stay one char per byte (lossless); SPF and DKIM records are
 * ASCII anyway (RFC 7208 §3, RFC 6376 §3.6.2.2), for which this is a plain join.
 * Linear in the record (one join, two single-class scans, at most one decode); exported for the
 * worst-case check (test/worst-case/dns.worst.ts).
 */
export function joinCharacterStrings(chunks: string[]): string {
  const joined = chunks.join('');
  return utf8OfBinary(joined) ?? joined;
}

function copyAnswer<T>(answer: DnsAnswer<T>, clone: (records: T) => T, ttl: number): DnsAnswer<T> {
  // Callers get their own copy, so mutating a result cannot poison the cache.
  return answer.status === 'ok' ? { status: 'ok', records: clone(answer.records), ttl } : { ...answer };
}

function cloneStrings(records: string[]): string[] {
  return [...records];
}

function cloneMx(records: MxRecord[]): MxRecord[] {
  return records.map((r) => ({ ...r }));
}

function positiveInt(value: number, what: string): number {
  if (!Number.isInteger(value) || value < 1) throw new Error(`${what} must be a positive integer, got ${value}`);
  return value;
}

/** 10.1.2.3 → 3.2.1.10.in-addr.arpa; an IPv6 address → its 32 nibbles reversed under ip6.arpa. */
export function reverseName(address: string): string {
  if (net.isIPv4(address)) return `${address.split('.').reverse().join('.')}.in-addr.arpa`;
  const parts = address.split('::');
  const head = parts[0] ? parts[0].split(':') : [];
  const tail = parts.length > 1 && parts[1] ? parts[1].split(':') : [];
  const groups = parts.length > 1 ? [...head, ...Array<string>(8 - head.length - tail.length).fill('0'), ...tail] : head;
  const nibbles = groups.map((g) => g.padStart(4, '0')).join('').toLowerCase().split('');
  return `${nibbles.reverse().join('.')}.ip6.arpa`;
}
