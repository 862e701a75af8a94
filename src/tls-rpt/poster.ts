/**
 * Delivers a report to an https: rua (RFC 8460 5.4): POST of the gzipped report as
 * application/tlsrpt+gzip; any 2xx is success, anything else (a redirect too) a failure.
 *
 * As for MTA-STS policies (mta-sts/fetcher.ts): the host is resolved through postrider's own
 * resolver and the connection goes to exactly the checked addresses through the webhooks'
 * pinned agent (webhooks/pinned-https.ts), public addresses only unless tlsRpt.allowPrivate (the URI comes from a third
 * party's DNS and must not make the daemon reach into the LAN); the certificate must chain to a
 * trusted root (plus tlsRpt.caFile for a private test CA) and be valid for the host.
 */
import { PinnedHttpsAgent } from '../webhooks/pinned-agent.js';
import { pinnedHttpsRequest, resolvePublicAddresses, trustedRoots } from '../webhooks/pinned-https.js';
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
    this.ca = trustedRoots(opts.extraCa);
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
    const found = await resolvePublicAddresses(this.opts.resolver, host, {
      allowPrivate: this.opts.allowPrivate,
      settingName: 'tlsRpt.allowPrivate',
      noRecordError: (h) => `${h} has no usable A or AAAA record`,
    });
    return typeof found === 'string' ? { ok: false, error: found } : found;
  }

  private async send(url: URL, addresses: ResolvedAddress[], gzip: Uint8Array): Promise<PostOutcome> {
    const timeoutMs = this.opts.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    const r = await pinnedHttpsRequest({
      host: url.hostname,
      servername: url.hostname,
      port: url.port ? Number(url.port) : 443,
      path: `${url.pathname}${url.search}`,
      method: 'POST',
      headers: { 'content-type': 'application/tlsrpt+gzip', 'content-length': String(gzip.length) },
      body: gzip,
      addresses,
      ca: this.ca,
      timeoutMs,
      maxBodyBytes: 0,
      agent: this.agent,
      readBodyIf: () => false, // only the status counts
    });
    if ('error' in r) {
      if (r.error === 'timeout') return { ok: false, error: `POST to ${url.origin} timed out after ${timeoutMs} ms` };
      return { ok: false, error: `POST to ${url.origin} failed: ${r.cause.code ? `${r.cause.code} ` : ''}${r.cause.message}` };
    }
    return r.status >= 200 && r.status < 300 ? { ok: true } : { ok: false, error: `${url.origin}${url.pathname} answered HTTP ${r.status}` };
  }
}
