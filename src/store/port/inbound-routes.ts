/**
 * Inbound routes (issue 33): which address of an account's domain receives mail, and the URL its
 * messages are POSTed to, signed with the route's own key.
 *
 * Part of the store port (store/port/index.ts): asynchronous verbs that take and return plain
 * data. Implemented by the LMDB engine (store/lmdb/inbound-routes.ts) and the PostgreSQL engine
 * (store/postgres/repos/inbound-routes.ts), checked by test/store-contract/inbound-routes.contract.test.ts.
 * A route goes with its channel (the channel delete) and with its domain (the domain delete), in
 * the commit that deletes them.
 */
import type { InboundRoute, InboundRoutePatch, RouteMatch } from '../../domain/inbound-route.js';

/** A route with its signing key (shown to the account, never logged). */
export interface RouteWithKey {
  route: InboundRoute;
  signingKey: string;
}

/** What POST /inbound/routes stores, and the per-account limit (config.inbound.maxRoutesPerAccount). */
export type NewInboundRouteInput = Omit<InboundRoute, 'id' | 'createdAt' | 'updatedAt'> & { maxPerAccount: number };

export interface InboundRouteFilter {
  accountId: string;
  /** Only routes of one of these channels (channel keys: their own). */
  channelIds?: string[];
  limit: number;
  offset: number;
}

export interface InboundRoutesPort {
  /**
   * Creates a route with a new signing key, as one atomic step (LMDB's single writer; the
   * account's row lock and a unique index on the address elsewhere): the account has fewer than
   * maxPerAccount routes (else resource_limit_exceeded), no route of any account has the address
   * (else validation_failed `duplicate` on /address), the domain is still the account's (else
   * validation_failed `unknown_domain`) and the channel a live channel of the account (else
   * channel_not_found), so a route never outlives a delete that raced with it.
   */
  create(input: NewInboundRouteInput): Promise<RouteWithKey>;

  get(id: string): Promise<InboundRoute | undefined>;

  /** The key payloads are signed with; null when the route is gone. */
  signingKey(id: string): Promise<string | null>;

  /** An account's routes in creation order (createdAt, then id), one page, with the number of matches. */
  list(f: InboundRouteFilter): Promise<{ results: InboundRoute[]; totalCount: number }>;

  /** Applies a patch (an atomic read-modify-write); undefined when the route does not exist. */
  update(id: string, patch: InboundRoutePatch): Promise<InboundRoute | undefined>;

  /** A new signing key replacing the old at once; undefined when the route does not exist. */
  regenerateSigningKey(id: string): Promise<RouteWithKey | undefined>;

  /** Removes the route with its key; false when it did not exist. */
  delete(id: string): Promise<boolean>;

  /** Whether any route (enabled or not) is on the domain: its dnsRecords then list the MX record. */
  anyOnDomain(domainId: string): Promise<boolean>;

  /**
   * The route a recipient (a normalized address) reaches, enabled or not (the listener decides
   * what a disabled route means): its exact address, else the address without its `+hash`, else
   * the domain's catch-all (domain/inbound-route.ts matchCandidates), compared case-insensitively.
   */
  match(recipient: string): Promise<RouteMatch | undefined>;

  /**
   * The oldest enabled route (createdAt, then id) whose address is on `domain` (lower-case
   * A-labels), of any account; undefined when the domain has none. Where mail to
   * `postmaster@domain` goes when match() gives it no enabled route (RFC 5321 4.5.1,
   * inbound/reception.ts). Asked per RCPT on untrusted input, so one indexed read, never a walk
   * of the domain's or an account's routes.
   */
  oldestEnabledOnDomain(domain: string): Promise<InboundRoute | undefined>;
}
