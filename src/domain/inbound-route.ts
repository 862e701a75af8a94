/**
 * Inbound routes as data (issue 33): the stored record, the form of its address, and the pure
 * rules of matching a recipient against routes, which every store engine applies alike.
 *
 * An address is `local@domain` or `*@domain` (the domain's catch-all), kept lower-cased, the
 * domain as A-labels. Local parts compare case-insensitively as well: RFC 5321 2.4 lets the
 * receiving host decide, and every provider users compare us with (Postmark, Mailgun, SendGrid)
 * treats `Support@` and `support@` as one mailbox. A recipient matches, in this order: a route of
 * its exact address; with plus-addressing (`support+4711@…`) the route of `support@…`, passing
 * `4711` as the mailbox hash; the domain's catch-all (with the hash, if any). Mail to
 * `postmaster@domain` that none of these gives an enabled route goes to the domain's oldest
 * enabled route (RFC 5321 4.5.1, postmasterDomain; inbound/reception.ts).
 */
import { normalizeDomain, normalizeEmail, type AddressProblem } from './address.js';
import { AppError } from './errors.js';
import type { WebhookHeader } from './webhook.js';

export interface InboundRoute {
  id: string;
  accountId: string;
  channelId: string;
  /** The account's domain the address is on (the route goes with the domain). */
  domainId: string;
  /** Normalized: lower-case, the domain as A-labels; `*@domain` for the catch-all. */
  address: string;
  url: string;
  enabled: boolean;
  additionalHeaders: WebhookHeader[];
  createdAt: string;
  updatedAt: string;
}

export type InboundRoutePatch = Partial<Pick<InboundRoute, 'url' | 'channelId' | 'enabled' | 'additionalHeaders'>>;

/** The local part of a domain's catch-all route. */
export const CATCH_ALL = '*';

/** RFC 5321 4.5.1: the reserved mailbox every domain an SMTP server receives mail for must accept. */
const POSTMASTER = 'postmaster';

/** Where plus-addressing splits a local part: `support+4711` is `support` with hash `4711`. */
const PLUS = '+';

/** What a recipient matched: the route, and the part after the first `+` of its local part (null without one). */
export interface RouteMatch {
  route: InboundRoute;
  mailboxHash: string | null;
}

/** A key to look up, in order of precedence, with the mailbox hash a route found under it gets. */
export interface MatchCandidate {
  address: string;
  mailboxHash: string | null;
}

/** The stored form of an address: the local part lower-cased, the domain given (already A-labels). */
export function routeAddress(local: string, domain: string): string {
  return `${local.toLowerCase()}@${domain.toLowerCase()}`;
}

/**
 * The addresses to look up for a recipient, most specific first: the exact address, the address
 * without its `+hash` (when the local part has one before other characters), the catch-all.
 * `recipient` is a normalized address (domain/address.ts: the domain as A-labels).
 */
export function matchCandidates(recipient: string): MatchCandidate[] {
  const at = recipient.lastIndexOf('@');
  if (at <= 0) return [];
  const local = recipient.slice(0, at);
  const domain = recipient.slice(at + 1).toLowerCase();
  const plus = local.indexOf(PLUS);
  // The hash keeps its case: it is the application's (a ticket id), not part of the mailbox name.
  const hash = plus > 0 ? local.slice(plus + 1) : null;
  const out: MatchCandidate[] = [{ address: routeAddress(local, domain), mailboxHash: null }];
  if (hash !== null) out.push({ address: routeAddress(local.slice(0, plus), domain), mailboxHash: hash });
  out.push({ address: `${CATCH_ALL}@${domain}`, mailboxHash: hash });
  return out;
}

/**
 * The domain (lower-cased) of `postmaster@domain`, else null. RFC 5321 4.5.1 makes the local part
 * case-insensitive (`Postmaster@`, `POSTMASTER@`). `postmaster+x@` is another mailbox: it is
 * routed as any other address. `recipient` is a normalized address.
 */
export function postmasterDomain(recipient: string): string | null {
  const at = recipient.lastIndexOf('@');
  if (at !== POSTMASTER.length || recipient.slice(0, at).toLowerCase() !== POSTMASTER) return null;
  return recipient.slice(at + 1).toLowerCase();
}

/** The domain of a stored route address (`local@domain`, `*@domain`): routes of one domain are found by it. */
export function routeDomain(address: string): string {
  return address.slice(address.lastIndexOf('@') + 1);
}

/** The first candidate that has a route (matchCandidates' order), with its mailbox hash. */
export function firstMatch(candidates: readonly MatchCandidate[], routeOf: (address: string) => InboundRoute | undefined): RouteMatch | undefined {
  for (const c of candidates) {
    const route = routeOf(c.address);
    if (route) return { route, mailboxHash: c.mailboxHash };
  }
  return undefined;
}

/**
 * The address of a new route as given in its body: `*@domain` or a plain `local@domain` (a
 * dot-atom local part: a quoted one is refused, as is routing syntax, domain/address.ts), with
 * the domain as A-labels; or the problem to answer on /address.
 */
export function parseRouteAddress(raw: string): { address: string; domain: string } | { problem: AddressProblem } {
  const at = raw.lastIndexOf('@');
  const local = at > 0 ? raw.slice(0, at) : '';
  if (local === CATCH_ALL) {
    const domain = normalizeDomain(raw.slice(at + 1));
    return domain ? { address: routeAddress(CATCH_ALL, domain), domain } : { problem: { code: 'invalid_format', message: 'has an invalid domain' } };
  }
  if (local.startsWith('"')) return { problem: { code: 'invalid_format', message: 'must have a plain local part (no quotes) or be *@domain' } };
  const n = normalizeEmail(raw);
  if ('problem' in n) return n;
  const domain = n.email.slice(n.email.lastIndexOf('@') + 1);
  return { address: routeAddress(n.email.slice(0, n.email.lastIndexOf('@')), domain), domain };
}

/** A route after a PATCH (both engines): each given field replaces its value, an absent one stays. */
export function patchedRoute(r: InboundRoute, patch: InboundRoutePatch, now: Date): InboundRoute {
  return {
    ...r,
    url: patch.url ?? r.url,
    channelId: patch.channelId ?? r.channelId,
    enabled: patch.enabled ?? r.enabled,
    additionalHeaders: patch.additionalHeaders ?? r.additionalHeaders,
    updatedAt: now.toISOString(),
  };
}

/** 422 on /address: another route has this address (of any account: mail to it can go one way only). */
export function addressTaken(address: string): AppError {
  return new AppError('validation_failed', `${address} is routed already`, {
    errors: { '/address': [{ code: 'duplicate', message: `${address} has a route already` }] },
  });
}

/** 422 on /address: the domain is not (or no longer) a domain of the account. */
export function unknownRouteDomain(domain: string): AppError {
  return new AppError('validation_failed', `${domain} is not a domain of the account`, {
    errors: { '/address': [{ code: 'unknown_domain', message: `${domain} is not a domain of this account (POST /domains first)` }] },
  });
}

/** 403: the account has config.inbound.maxRoutesPerAccount routes already. */
export function routeLimitExceeded(max: number): AppError {
  return new AppError('resource_limit_exceeded', `An account may have at most ${max} inbound routes`);
}
