/**
 * Where a webhook may point. A webhook URL is chosen by an API user, so without care it is a way
 * to make the daemon send requests to itself, to a cloud metadata address or to the LAN (SSRF).
 * The rules: https only (unless webhooks.allowHttp), no credentials in the URL, and every
 * address the host resolves to must be globally routable (unless webhooks.allowPrivate). The
 * address check runs at create time and again at each delivery, after resolving, and the
 * request then connects to exactly the addresses that were checked (a name that resolves to a
 * public address at the check and to 127.0.0.1 at connect time, DNS rebinding, gets nowhere).
 */
import dns from 'node:dns';
import net from 'node:net';
import type { DnsAnswer } from '../dns/resolver.js';
import { isGloballyReachable, specialRange } from '../domain/special-addresses.js';
import { trimEndOf } from '../domain/trim-end.js';

export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

export type Resolution =
  | { ok: true; addresses: ResolvedAddress[] }
  /** kind 'refused': only private addresses; 'nxdomain': the name does not exist; 'error': try later. */
  | { ok: false; kind: 'refused' | 'nxdomain' | 'error'; error: string };

export interface UrlProblem {
  code: string;
  message: string;
}

/** The resolver's A/AAAA lookups (a started DnsResolver), used when dns.servers is configured. */
export interface AddressLookups {
  a(name: string): Promise<DnsAnswer<string[]>>;
  aaaa(name: string): Promise<DnsAnswer<string[]>>;
}

export interface WebhookTargetOptions {
  allowHttp: boolean;
  allowPrivate: boolean;
  /** Absent: node's dns.lookup (the system's resolver, /etc/hosts included). */
  resolver?: AddressLookups;
}

export const MAX_URL_LENGTH = 2048;

export class WebhookTargets {
  constructor(private readonly opts: WebhookTargetOptions) {}

  /** Scheme, credentials, host: what can be told from the text alone. */
  checkSyntax(raw: string): UrlProblem | null {
    let u: URL;
    try {
      u = new URL(raw);
    } catch {
      return { code: 'invalid_format', message: 'must be an absolute URL' };
    }
    if (u.protocol === 'http:' && !this.opts.allowHttp) return { code: 'insecure_url', message: 'must use https (http is not allowed by webhooks.allowHttp)' };
    if (u.protocol !== 'https:' && u.protocol !== 'http:') return { code: 'invalid_format', message: 'must be an https URL' };
    if (u.username || u.password) return { code: 'invalid_format', message: 'must not carry credentials; send them with additionalHeaders (Authorization)' };
    if (!u.hostname) return { code: 'invalid_format', message: 'must name a host' };
    return null;
  }

  /** The create/update check: syntax, then the addresses the host resolves to now. */
  async checkUrl(raw: string): Promise<UrlProblem | null> {
    const syntax = this.checkSyntax(raw);
    if (syntax) return syntax;
    const r = await this.resolve(new URL(raw).hostname);
    if (r.ok) return null;
    if (r.kind === 'refused') return { code: 'forbidden_address', message: r.error };
    if (r.kind === 'nxdomain') return { code: 'unresolvable_host', message: r.error };
    return null; // a temporary DNS failure is checked again at delivery
  }

  /** The host's addresses that may be connected to, or why there are none. */
  async resolve(hostname: string): Promise<Resolution> {
    const host = hostname.replace(/^\[(.*)\]$/, '$1').toLowerCase();
    const found = await this.lookup(host);
    if (!found.ok) return found;
    const allowed = connectableAddresses(found.addresses, this.opts.allowPrivate);
    if (allowed.length === 0) {
      const shown = found.addresses.map((a) => `${a.address} (${specialRange(a.address)?.purpose ?? 'refused'})`).join(', ');
      return { ok: false, kind: 'refused', error: `${host} resolves to ${shown}: loopback, private or reserved addresses are not allowed (webhooks.allowPrivate)` };
    }
    return { ok: true, addresses: allowed };
  }

  private async lookup(host: string): Promise<Resolution> {
    const family = net.isIP(host);
    if (family !== 0) return { ok: true, addresses: [{ address: host, family: family as 4 | 6 }] };
    // RFC 6761 6.3: localhost and every name under it are loopback, whatever a resolver says;
    // "localhost." is the same name written fully qualified (RFC 1034 3.1).
    if (isLocalhostName(host)) {
      return { ok: true, addresses: [{ address: '127.0.0.1', family: 4 }, { address: '::1', family: 6 }] };
    }
    return this.opts.resolver ? resolverAddresses(this.opts.resolver, host) : viaSystem(host);
  }
}

/** The A and AAAA answers for `host` merged, or why there are none: kind 'error' when a lookup
 *  failed, 'nxdomain' when both answered without a record. Shared with pinned-https.ts. */
export async function resolverAddresses(resolver: AddressLookups, host: string): Promise<Resolution> {
  const [a, aaaa] = await Promise.all([resolver.a(host), resolver.aaaa(host)]);
  const addresses: ResolvedAddress[] = [
    ...(a.status === 'ok' ? a.records.map((address) => ({ address, family: 4 as const })) : []),
    ...(aaaa.status === 'ok' ? aaaa.records.map((address) => ({ address, family: 6 as const })) : []),
  ];
  if (addresses.length > 0) return { ok: true, addresses };
  if (a.status === 'error' || aaaa.status === 'error') return { ok: false, kind: 'error', error: `DNS lookup of ${host} failed` };
  return { ok: false, kind: 'nxdomain', error: `${host} has no A or AAAA record` };
}

/** The addresses that may be connected to: globally reachable ones, or all when allowPrivate. */
export function connectableAddresses(found: ResolvedAddress[], allowPrivate: boolean): ResolvedAddress[] {
  return found.filter((a) => allowPrivate || isGloballyReachable(a.address));
}

function isLocalhostName(host: string): boolean {
  const name = trimEndOf(host, '.');
  return name === 'localhost' || name.endsWith('.localhost');
}

async function viaSystem(host: string): Promise<Resolution> {
  try {
    const found = await dns.promises.lookup(host, { all: true, verbatim: true });
    if (found.length === 0) return { ok: false, kind: 'nxdomain', error: `${host} has no address` };
    return { ok: true, addresses: found.map((f) => ({ address: f.address, family: f.family === 6 ? 6 : 4 })) };
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOTFOUND' || code === 'ENODATA') return { ok: false, kind: 'nxdomain', error: `${host} does not resolve` };
    return { ok: false, kind: 'error', error: `DNS lookup of ${host} failed (${code ?? 'error'})` };
  }
}
