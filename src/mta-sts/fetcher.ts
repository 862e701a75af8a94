/**
 * Fetches a domain's MTA-STS policy text: HTTPS GET https://mta-sts.<domain>/.well-known/mta-sts.txt
 * (RFC 8461 3.3).
 *
 * - mta-sts.<domain> is resolved through postrider's own resolver (dns/resolver.ts, the servers
 *   of dns.servers), not the system's, and the connection goes to exactly the addresses it
 *   returned, through the webhooks' pinned agent (webhooks/pinned-https.ts): one resolver
 *   decides where mail and policies come from, and tests point both at their DNS server.
 * - Addresses outside the public internet are refused unless delivery.allowPrivate: a recipient
 *   domain is chosen by whoever sends, and must not make the daemon reach into the LAN.
 * - The certificate must chain to a trusted root and be valid for mta-sts.<domain> (RFC 8461
 *   3.3). The roots are node's bundled ones, plus the extra CA certificates given (for tests
 *   with a private CA, delivery.mtaSts.caFile).
 * - Only a 200 counts. 3xx redirects are not followed (RFC 8461 3.3); the media type must be
 *   text/plain (RFC 8461 3.2); bodies over 64 KiB and fetches over the timeout are failures.
 */
import type { IncomingHttpHeaders } from 'node:http';
import type { AddressLookups, ResolvedAddress } from '../webhooks/targets.js';
import { PinnedHttpsAgent } from '../webhooks/pinned-agent.js';
import { pinnedHttpsRequest, resolvePublicAddresses, trustedRoots } from '../webhooks/pinned-https.js';
import { MAX_POLICY_BYTES } from './policy.js';

/**
 * Why a fetch failed, as TLS-RPT tells it (RFC 8460 4.3.2.2): `webpki` when the policy host's
 * certificate did not verify ("could not be authenticated using PKIX validation",
 * sts-webpki-invalid), `fetch` for everything else that kept the policy text from us (no
 * address, connection, timeout, HTTP status, media type, size: sts-policy-fetch-error).
 */
export type FetchFailureKind = 'fetch' | 'webpki';

export type FetchResult = { ok: true; text: string } | { ok: false; kind: FetchFailureKind; error: string };

export interface PolicyFetcherOptions {
  resolver: AddressLookups;
  /** Connect to loopback and private addresses too (delivery.allowPrivate, tests only). */
  allowPrivate: boolean;
  /** PEM certificates trusted beside node's roots; for a private (test) CA only. */
  extraCa?: string;
  /** 443 (RFC 8461 3.3); another port for tests only. */
  port?: number;
  timeoutMs?: number;
}

export const POLICY_PATH = '/.well-known/mta-sts.txt';
export { MAX_POLICY_BYTES };
const DEFAULT_TIMEOUT_MS = 20_000;

export class PolicyFetcher {
  private readonly agent = new PinnedHttpsAgent({ keepAlive: false });
  private readonly ca: string[] | undefined;
  private readonly port: number;
  private readonly timeoutMs: number;

  constructor(private readonly opts: PolicyFetcherOptions) {
    this.ca = trustedRoots(opts.extraCa);
    this.port = opts.port ?? 443;
    this.timeoutMs = opts.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  }

  /** The policy text of `domain` (lower case, no trailing dot), or why there is none. */
  async fetch(domain: string): Promise<FetchResult> {
    const host = `mta-sts.${domain}`;
    const addresses = await this.addresses(host);
    if (!Array.isArray(addresses)) return addresses;
    return this.get(host, addresses);
  }

  close(): void {
    this.agent.destroy();
  }

  private async addresses(host: string): Promise<ResolvedAddress[] | FetchResult> {
    const found = await resolvePublicAddresses(this.opts.resolver, host, { allowPrivate: this.opts.allowPrivate, settingName: 'delivery.allowPrivate' });
    return typeof found === 'string' ? { ok: false, kind: 'fetch', error: found } : found;
  }

  private async get(host: string, addresses: ResolvedAddress[]): Promise<FetchResult> {
    const r = await pinnedHttpsRequest({
      host,
      servername: host,
      port: this.port,
      path: POLICY_PATH,
      method: 'GET',
      headers: { accept: 'text/plain' },
      addresses,
      ca: this.ca,
      timeoutMs: this.timeoutMs,
      maxBodyBytes: MAX_POLICY_BYTES,
      agent: this.agent,
      // A redirect, another status or media type fails before its body is waited for.
      readBodyIf: (status, headers) => answerProblem(host, status, headers) === null,
    });
    if ('error' in r) {
      return r.error === 'timeout' ? fetchError(`fetching ${host} timed out after ${this.timeoutMs} ms`) : describeError(host, r.cause);
    }
    const problem = answerProblem(host, r.status, r.headers);
    if (problem) return fetchError(problem);
    if (r.tooLarge !== undefined) return fetchError(tooLarge(r.tooLarge));
    if (r.readError) return fetchError(`reading the policy from ${host} failed: ${r.readError.message}`);
    return { ok: true, text: r.body.toString('utf8') };
  }
}

/** Only a 200 of text/plain is a policy (RFC 8461 3.2, 3.3); otherwise why not. */
function answerProblem(host: string, status: number, headers: IncomingHttpHeaders): string | null {
  if (status >= 300 && status < 400) return `https://${host}${POLICY_PATH} answered ${status}, a redirect, which is not followed (RFC 8461 3.3)`;
  if (status !== 200) return `https://${host}${POLICY_PATH} answered HTTP ${status}`;
  const type = (headers['content-type'] ?? '').split(';')[0].trim().toLowerCase();
  if (type !== 'text/plain') return `the policy's media type is "${type}", not text/plain (RFC 8461 3.2)`;
  return null;
}

function tooLarge(bytes: number): string {
  return `the policy body is larger than ${MAX_POLICY_BYTES} bytes (${bytes} and more)`;
}

function fetchError(error: string): FetchResult {
  return { ok: false, kind: 'fetch', error };
}

/** TLS verification failures name the certificate, so an operator sees why a policy is missing. */
function describeError(host: string, err: NodeJS.ErrnoException): FetchResult {
  const code = err.code ?? '';
  if (code === 'ERR_TLS_CERT_ALTNAME_INVALID' || /CERT|SELF_SIGNED|UNABLE_TO_(GET|VERIFY)/.test(code)) {
    return { ok: false, kind: 'webpki', error: `the certificate of ${host} is not valid (${code}: ${err.message})` };
  }
  return fetchError(`fetching https://${host}${POLICY_PATH} failed: ${code ? `${code} ` : ''}${err.message}`);
}
