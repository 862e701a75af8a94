/**
 * MTA-STS policies of recipient domains for delivery (RFC 8461 5.1), cached in the store
 * (store/port/delivery-state.ts MtaStsPort) so they survive restarts.
 *
 * On each lookup the `_mta-sts` TXT record's id is read first (the resolver parses the record once
 * per DNS answer and caches the id for the answer's TTL):
 *  - a record whose id equals the cached, unexpired policy's: the cached policy;
 *  - a record with another id (or no usable cached policy): the policy is fetched anew; if the
 *    fetch fails, the cached policy stays in force until it expires (RFC 8461 5.1), and the
 *    fetch of that id is not tried again for FETCH_RETRY_MS, so a broken policy host does not
 *    cost every delivery attempt an HTTPS request;
 *  - no record (or a DNS failure, or not exactly one valid record): a cached unexpired policy
 *    still applies (RFC 8461 5.1: a removed record does not end a policy before max_age),
 *    otherwise the domain has none.
 * Concurrent lookups of one domain share one.
 *
 * A lookup also says when the domain announced a policy (its TXT id) that could not be had:
 * fetched and failed, or failed within FETCH_RETRY_MS before (the attempt goes without it all the
 * same). Delivery tells TLS-RPT (delivery/tls-reporting.ts, RFC 8460 4.3.2.2); what delivery
 * does is unchanged: the cached policy if any, else none (RFC 8461 5).
 */
import fs from 'node:fs';
import { normalizeName, type DnsResolver } from '../dns/resolver.js';
import type { Logger } from '../log/logger.js';
import type { CachedStsPolicy } from '../store/port/delivery-state.js';
import type { StorePort } from '../store/port/index.js';
import type { AddressLookups } from '../webhooks/targets.js';
import { PolicyFetcher, type FetchFailureKind } from './fetcher.js';
import { mxAllowed as policyAllowsMx, parsePolicy, type StsMode } from './policy.js';
import { stsRecordId } from './txt.js';

/** What delivery needs of a domain's policy. */
export interface ActiveStsPolicy {
  mode: StsMode;
  mx: string[];
  id: string;
  /** The policy's max_age in seconds (RFC 8461 3.2), for TLS-RPT's policy-string (RFC 8460 4.4). */
  maxAge: number;
}

/**
 * Why the announced policy could not be had: the fetcher's reasons (fetcher.ts), or `invalid`
 * when the text came but is not a valid policy (policy.ts, RFC 8461 3.2).
 */
export interface StsFetchFailure {
  kind: FetchFailureKind | 'invalid';
  /** The announced id whose policy is missing. */
  id: string;
  /** In words, for the log and TLS-RPT's failure-reason-code. */
  reason: string;
}

/** A lookup's answer: the policy in force (null: none), and the failure to get the announced one. */
export interface StsLookup {
  policy: ActiveStsPolicy | null;
  fetchFailure?: StsFetchFailure;
}

const NO_POLICY: StsLookup = Object.freeze({ policy: null });

export interface MtaStsConfig {
  enabled: boolean;
  /** PEM file of extra CA certificates for the policy hosts (testing with a private CA); '' for none. */
  caFile: string;
  /** 443; another port for tests only. */
  httpsPort: number;
}

export interface MtaStsPoliciesOptions {
  store: StorePort;
  resolver: AddressLookups & Pick<DnsResolver, 'txtParsed'>;
  config: MtaStsConfig;
  allowPrivate: boolean;
  logger: Logger;
  fetchTimeoutMs?: number;
  now?: () => number;
}

/** After a failed fetch, the same domain and id are fetched again after this long at the earliest. */
export const FETCH_RETRY_MS = 5 * 60_000;
/**
 * How long this process reuses what it read of a domain's stored policy. Every attempt looks its
 * domain's policy up; on PostgreSQL each read was a round trip per message (bench cluster). A
 * policy stored meanwhile by another node is seen this much later at most: until then this node
 * applies the one it read (a policy lasts days: RFC 8461 max_age), or, when the TXT id moved on,
 * fetches the new one itself.
 */
export const STORED_MEMO_MS = 30_000;
/** Domains whose stored policy is remembered at most (the memo starts over past it). */
const STORED_MEMO_MAX = 10_000;

export class MtaStsPolicies {
  private fetcher: PolicyFetcher | null = null;
  private readonly inflight = new Map<string, Promise<StsLookup>>();
  /** `${domain} ${id}` → the last failed fetch of that id: when, and why. */
  private readonly failedFetches = new Map<string, { atMs: number; failure: StsFetchFailure }>();
  /** What the store held for a domain when this process last read or wrote it (STORED_MEMO_MS). */
  private readonly stored = new Map<string, { entry: CachedStsPolicy | undefined; atMs: number }>();
  private readonly now: () => number;

  constructor(private readonly opts: MtaStsPoliciesOptions) {
    this.now = opts.now ?? Date.now;
  }

  /** Reads the CA file now, so a wrong path stops the start instead of every fetch. */
  async start(): Promise<void> {
    if (!this.opts.config.enabled || this.fetcher) return;
    const { caFile, httpsPort } = this.opts.config;
    this.fetcher = new PolicyFetcher({
      resolver: this.opts.resolver,
      allowPrivate: this.opts.allowPrivate,
      extraCa: caFile ? fs.readFileSync(caFile, 'utf8') : undefined,
      port: httpsPort,
      timeoutMs: this.opts.fetchTimeoutMs,
    });
  }

  async stop(): Promise<void> {
    this.fetcher?.close();
    this.fetcher = null;
    this.inflight.clear();
  }

  /**
   * The domain's policy in force (null: none, MTA-STS off, or not started), and why an announced
   * one is missing (see the file comment).
   */
  lookup(domain: string): Promise<StsLookup> {
    if (!this.fetcher) return Promise.resolve(NO_POLICY);
    const name = normalizeName(domain);
    let pending = this.inflight.get(name);
    if (!pending) {
      pending = this.resolve(name);
      this.inflight.set(name, pending);
      const forget = (): void => {
        if (this.inflight.get(name) === pending) this.inflight.delete(name);
      };
      pending.then(forget, forget);
    }
    return pending;
  }

  /** The domain's stored policy, read at most once per STORED_MEMO_MS. */
  private async storedPolicy(domain: string): Promise<CachedStsPolicy | undefined> {
    const known = this.stored.get(domain);
    if (known && this.now() - known.atMs < STORED_MEMO_MS) return known.entry;
    const entry = await this.opts.store.mtaSts.get(domain);
    this.memo(domain, entry);
    return entry;
  }

  private memo(domain: string, entry: CachedStsPolicy | undefined): void {
    if (this.stored.size >= STORED_MEMO_MAX && !this.stored.has(domain)) this.stored.clear();
    this.stored.set(domain, { entry, atMs: this.now() });
  }

  /** RFC 8461 4.1: whether delivery may use this MX host under the policy. */
  mxAllowed(policy: Pick<ActiveStsPolicy, 'mx'>, mxHost: string): boolean {
    return policyAllowsMx(policy, mxHost);
  }

  private async resolve(domain: string): Promise<StsLookup> {
    const cached = await this.storedPolicy(domain);
    const live = cached && cached.expiresAtMs > this.now() ? cached : undefined;
    // Parsed once per DNS answer, by the resolver, which caches the id rather than the text: an
    // attempt reads no record (a domain's record can fill a 64 KiB DNS message).
    const txt = await this.opts.resolver.txtParsed(`_mta-sts.${domain}`, 'mta-sts', stsRecordId);
    const id = txt.status === 'ok' ? txt.records : null;
    if (id === null || id === live?.id) return live ? { policy: active(live) } : NO_POLICY;
    const fetched = await this.fetchPolicy(domain, id);
    if ('id' in fetched) return { policy: active(fetched) };
    return { policy: live ? active(live) : null, ...(fetched.failure && { fetchFailure: fetched.failure }) };
  }

  /**
   * Fetches, parses and stores the policy of `id`; or why that failed (logged when fetched, and
   * remembered for FETCH_RETRY_MS, within which the id is not fetched again).
   */
  private async fetchPolicy(domain: string, id: string): Promise<CachedStsPolicy | { failure?: StsFetchFailure }> {
    const key = `${domain} ${id}`;
    const failed = this.failedFetches.get(key);
    if (failed !== undefined && this.now() - failed.atMs < FETCH_RETRY_MS) return { failure: failed.failure };
    const fetcher = this.fetcher;
    if (!fetcher) return {}; // stopped meanwhile: our shutdown, not the domain's failure
    const result = await fetcher.fetch(domain);
    const parsed = result.ok ? parsePolicy(result.text) : result;
    if (!parsed.ok) return { failure: this.remember(domain, { kind: result.ok ? 'invalid' : result.kind, id, reason: parsed.error }) };
    this.failedFetches.delete(key);
    const fetchedAtMs = this.now();
    const entry: CachedStsPolicy = { id, policy: parsed.policy, fetchedAtMs, expiresAtMs: fetchedAtMs + parsed.policy.maxAge * 1000 };
    this.memo(domain, entry);
    try {
      await this.opts.store.mtaSts.save(domain, entry);
    } catch (err) {
      // Not kept for the next start, but valid now: delivery applies it all the same.
      this.opts.logger.error({ err, domain }, 'MTA-STS policy could not be stored');
    }
    this.opts.logger.info({ domain, id, mode: parsed.policy.mode }, 'MTA-STS policy fetched');
    return entry;
  }

  private remember(domain: string, failure: StsFetchFailure): StsFetchFailure {
    // A bound, not a policy: the entries only save requests, forgetting them costs one fetch each.
    if (this.failedFetches.size >= 10_000) this.failedFetches.clear();
    this.failedFetches.set(`${domain} ${failure.id}`, { atMs: this.now(), failure });
    this.opts.logger.warn({ domain, id: failure.id, error: failure.reason }, 'MTA-STS policy could not be fetched; a cached policy stays in force until it expires');
    return failure;
  }
}

function active(c: CachedStsPolicy): ActiveStsPolicy {
  return { mode: c.policy.mode, mx: [...c.policy.mx], id: c.id, maxAge: c.policy.maxAge };
}
