/**
 * Fetches a domain's MTA-STS policy text: HTTPS GET https://mta-sts.<domain>/.well-known/mta-sts.txt
 * (RFC 8461 3.3).
 *
 * - mta-sts.<domain> is resolved through postrider's own resolver (dns/resolver.ts, the servers
 *   of dns.servers), not the system's, and the connection goes to exactly the addresses it
 *   returned, through the webhooks' pinned agent (webhooks/pinned-agent.ts): one resolver
 *   decides where mail and policies come from, and tests point both at their DNS server.
 * - Addresses outside the public internet are refused unless delivery.allowPrivate: a recipient
 *   domain is chosen by whoever sends, and must not make the daemon reach into the LAN.
 * - The certificate must chain to a trusted root and be valid for mta-sts.<domain> (RFC 8461
 *   3.3). The roots are node's bundled ones, plus the extra CA certificates given (for tests
 *   with a private CA, delivery.mtaSts.caFile).
 * - Only a 200 counts. 3xx redirects are not followed (RFC 8461 3.3); the media type must be
 *   text/plain (RFC 8461 3.2); bodies over 64 KiB and fetches over the timeout are failures.
 */
import https from 'node:https';
import tls from 'node:tls';
import type { IncomingMessage } from 'node:http';
import type { AddressLookups, ResolvedAddress } from '../webhooks/targets.js';
import { PinnedHttpsAgent, type PinnedRequestOptions } from '../webhooks/pinned-agent.js';
import { isGloballyReachable } from '../domain/special-addresses.js';

export type FetchResult = { ok: true; text: string } | { ok: false; error: string };

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
/** RFC 8461 3.3 suggests senders limit the policy body; 64 KiB is far above any real policy. */
export const MAX_POLICY_BYTES = 64 * 1024;
const DEFAULT_TIMEOUT_MS = 20_000;

export class PolicyFetcher {
  private readonly agent = new PinnedHttpsAgent({ keepAlive: false });
  private readonly ca: string[] | undefined;
  private readonly port: number;
  private readonly timeoutMs: number;

  constructor(private readonly opts: PolicyFetcherOptions) {
    // `ca` replaces node's roots, so the extra certificates are added to them, not used alone.
    this.ca = opts.extraCa ? [...tls.rootCertificates, opts.extraCa] : undefined;
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
    const [a, aaaa] = await Promise.all([this.opts.resolver.a(host), this.opts.resolver.aaaa(host)]);
    const found: ResolvedAddress[] = [
      ...(a.status === 'ok' ? a.records.map((address) => ({ address, family: 4 as const })) : []),
      ...(aaaa.status === 'ok' ? aaaa.records.map((address) => ({ address, family: 6 as const })) : []),
    ];
    if (found.length === 0) {
      const failed = a.status === 'error' || aaaa.status === 'error';
      return { ok: false, error: failed ? `DNS lookup of ${host} failed` : `${host} has no A or AAAA record` };
    }
    const allowed = found.filter((f) => this.opts.allowPrivate || isGloballyReachable(f.address));
    if (allowed.length === 0) return { ok: false, error: `${host} resolves only to non-public addresses (delivery.allowPrivate)` };
    return allowed;
  }

  private get(host: string, addresses: ResolvedAddress[]): Promise<FetchResult> {
    return new Promise((resolve) => {
      let settled = false;
      const finish = (r: FetchResult): void => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        req.destroy();
        resolve(r);
      };
      const options: PinnedRequestOptions = {
        host,
        servername: host,
        port: this.port,
        path: POLICY_PATH,
        method: 'GET',
        agent: this.agent,
        ca: this.ca,
        rejectUnauthorized: true,
        headers: { accept: 'text/plain' },
        pinned: { addresses, timeoutMs: this.timeoutMs },
      };
      const req = https.request(options, (res) => readBody(res, host, finish));
      const timer = setTimeout(() => finish({ ok: false, error: `fetching ${host} timed out after ${this.timeoutMs} ms` }), this.timeoutMs);
      req.on('error', (err: NodeJS.ErrnoException) => finish({ ok: false, error: describeError(host, err) }));
      req.end();
    });
  }
}

/** Checks the status and media type, then collects at most MAX_POLICY_BYTES of body. */
function readBody(res: IncomingMessage, host: string, finish: (r: FetchResult) => void): void {
  const status = res.statusCode ?? 0;
  if (status >= 300 && status < 400) return finish({ ok: false, error: `https://${host}${POLICY_PATH} answered ${status}, a redirect, which is not followed (RFC 8461 3.3)` });
  if (status !== 200) return finish({ ok: false, error: `https://${host}${POLICY_PATH} answered HTTP ${status}` });
  const type = (res.headers['content-type'] ?? '').split(';')[0].trim().toLowerCase();
  if (type !== 'text/plain') return finish({ ok: false, error: `the policy's media type is "${type}", not text/plain (RFC 8461 3.2)` });
  const declared = Number(res.headers['content-length']);
  if (declared > MAX_POLICY_BYTES) return finish({ ok: false, error: tooLarge(declared) });
  const chunks: Buffer[] = [];
  let size = 0;
  res.on('data', (chunk: Buffer) => {
    size += chunk.length;
    if (size > MAX_POLICY_BYTES) return finish({ ok: false, error: tooLarge(size) });
    chunks.push(chunk);
  });
  res.on('end', () => finish({ ok: true, text: Buffer.concat(chunks).toString('utf8') }));
  res.on('error', (err) => finish({ ok: false, error: `reading the policy from ${host} failed: ${err.message}` }));
}

function tooLarge(bytes: number): string {
  return `the policy body is larger than ${MAX_POLICY_BYTES} bytes (${bytes} and more)`;
}

/** TLS verification failures name the certificate, so an operator sees why a policy is missing. */
function describeError(host: string, err: NodeJS.ErrnoException): string {
  const code = err.code ?? '';
  if (code === 'ERR_TLS_CERT_ALTNAME_INVALID' || /CERT|SELF_SIGNED|UNABLE_TO_(GET|VERIFY)/.test(code)) {
    return `the certificate of ${host} is not valid (${code}: ${err.message})`;
  }
  return `fetching https://${host}${POLICY_PATH} failed: ${code ? `${code} ` : ''}${err.message}`;
}
