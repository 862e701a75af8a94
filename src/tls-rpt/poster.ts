/**
 * Delivers a report to an https: rua (RFC 8460 5.4): POST of the gzipped report as
 * application/tlsrpt+gzip; any 2xx is success, anything else (a redirect too) a failure.
 *
 * As for MTA-STS policies (mta-sts/fetcher.ts): the host is resolved through postrider's own
 * resolver and the connection goes to exactly the checked addresses through the webhooks'
 * pinned agent, public addresses only unless tlsRpt.allowPrivate (the URI comes from a third
 * party's DNS and must not make the daemon reach into the LAN); the certificate must chain to a
 * trusted root (plus tlsRpt.caFile for a private test CA) and be valid for the host.
 */
import https from 'node:https';
import tls from 'node:tls';
import { isGloballyReachable } from '../domain/special-addresses.js';
import { PinnedHttpsAgent, type PinnedRequestOptions } from '../webhooks/pinned-agent.js';
import type { AddressLookups, ResolvedAddress } from '../webhooks/targets.js';

export interface ReportPosterOptions {
  resolver: AddressLookups;
  allowPrivate: boolean;
  /** PEM certificates trusted beside node's roots; for a private (test) CA only. */
  extraCa?: string;
  timeoutMs?: number;
}

export type PostOutcome = { ok: true } | { ok: false; error: string };

const DEFAULT_TIMEOUT_MS = 30_000;

export class ReportPoster {
  private readonly agent = new PinnedHttpsAgent({ keepAlive: false });
  private readonly ca: string[] | undefined;

  constructor(private readonly opts: ReportPosterOptions) {
    // `ca` replaces node's roots, so the extra certificates are added to them.
    this.ca = opts.extraCa ? [...tls.rootCertificates, opts.extraCa] : undefined;
  }

  async post(uri: string, gzip: Uint8Array): Promise<PostOutcome> {
    let url: URL;
    try {
      url = new URL(uri);
    } catch {
      return { ok: false, error: `${uri} is not a URL` };
    }
    if (url.protocol !== 'https:') return { ok: false, error: `${uri} is not an https: URI` };
    const addresses = await this.addresses(url.hostname);
    if (!Array.isArray(addresses)) return addresses;
    return this.send(url, addresses, gzip);
  }

  close(): void {
    this.agent.destroy();
  }

  private async addresses(host: string): Promise<ResolvedAddress[] | PostOutcome> {
    const [a, aaaa] = await Promise.all([this.opts.resolver.a(host), this.opts.resolver.aaaa(host)]);
    const found: ResolvedAddress[] = [
      ...(a.status === 'ok' ? a.records.map((address) => ({ address, family: 4 as const })) : []),
      ...(aaaa.status === 'ok' ? aaaa.records.map((address) => ({ address, family: 6 as const })) : []),
    ];
    if (found.length === 0) return { ok: false, error: `${host} has no usable A or AAAA record` };
    const allowed = found.filter((f) => this.opts.allowPrivate || isGloballyReachable(f.address));
    if (allowed.length === 0) return { ok: false, error: `${host} resolves only to non-public addresses (tlsRpt.allowPrivate)` };
    return allowed;
  }

  private send(url: URL, addresses: ResolvedAddress[], gzip: Uint8Array): Promise<PostOutcome> {
    const timeoutMs = this.opts.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    return new Promise((resolve) => {
      let settled = false;
      const finish = (r: PostOutcome): void => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        req.destroy();
        resolve(r);
      };
      const options: PinnedRequestOptions = {
        method: 'POST',
        agent: this.agent,
        ca: this.ca,
        rejectUnauthorized: true,
        servername: url.hostname,
        headers: { 'content-type': 'application/tlsrpt+gzip', 'content-length': String(gzip.length) },
        pinned: { addresses, timeoutMs },
      };
      const req = https.request(url, options, (res) => {
        const code = res.statusCode ?? 0;
        res.resume();
        finish(code >= 200 && code < 300 ? { ok: true } : { ok: false, error: `${url.origin}${url.pathname} answered HTTP ${code}` });
      });
      const timer = setTimeout(() => finish({ ok: false, error: `POST to ${url.origin} timed out after ${timeoutMs} ms` }), timeoutMs);
      req.on('error', (err: NodeJS.ErrnoException) => finish({ ok: false, error: `POST to ${url.origin} failed: ${err.code ? `${err.code} ` : ''}${err.message}` }));
      req.end(gzip);
    });
  }
}
