/**
 * One HTTPS request to a host named by a third party (an MTA-STS policy host, a TLS-RPT rua),
 * shared by mta-sts/fetcher.ts and tls-rpt/poster.ts:
 * - the host is resolved through postrider's own resolver (dns/resolver.ts), and addresses
 *   outside the public internet are refused unless the caller's allowPrivate setting says
 *   otherwise: the name comes from someone else's DNS and must not make the daemon reach into
 *   the LAN;
 * - the request connects to exactly those addresses through a PinnedHttpsAgent (pinned-agent.ts),
 *   within one deadline, and reads at most maxBodyBytes of the answer.
 * The callers word every failure themselves; this module only says what happened.
 */
import https from 'node:https';
import tls from 'node:tls';
import type { IncomingHttpHeaders, IncomingMessage } from 'node:http';
import type { PinnedHttpsAgent, PinnedRequestOptions } from './pinned-agent.js';
import { connectableAddresses, resolverAddresses, type AddressLookups, type ResolvedAddress } from './targets.js';

export interface PublicAddressOptions {
  /** Connect to loopback and private addresses too (tests only). */
  allowPrivate: boolean;
  /** The setting named when only non-public addresses were found, e.g. "delivery.allowPrivate". */
  settingName: string;
  /** The error when no A or AAAA record was found; by default it tells a DNS failure from no record. */
  noRecordError?: (host: string) => string;
}

/** The A and AAAA addresses of `host` that may be connected to, or why there are none. */
export async function resolvePublicAddresses(resolver: AddressLookups, host: string, opts: PublicAddressOptions): Promise<ResolvedAddress[] | string> {
  const found = await resolverAddresses(resolver, host);
  if (!found.ok) return opts.noRecordError ? opts.noRecordError(host) : found.error;
  const allowed = connectableAddresses(found.addresses, opts.allowPrivate);
  if (allowed.length === 0) return `${host} resolves only to non-public addresses (${opts.settingName})`;
  return allowed;
}

/** The roots to pass as `ca`: node's bundled ones plus `extraPem` (a private CA, for tests), or
 *  undefined (node's alone) without it. `ca` replaces node's roots, so the extra certificates are
 *  added to them, not used alone. */
export function trustedRoots(extraPem?: string): string[] | undefined {
  return extraPem ? [...tls.rootCertificates, extraPem] : undefined;
}

export interface PinnedHttpsRequest {
  host: string;
  /** The name the certificate must be valid for (SNI and verification). */
  servername: string;
  port: number;
  path: string;
  method: string;
  headers: Record<string, string>;
  body?: Uint8Array;
  addresses: ResolvedAddress[];
  /** Trusted roots; undefined: node's bundled ones. */
  ca: string[] | undefined;
  /** Covers connecting, sending and reading the answer. */
  timeoutMs: number;
  maxBodyBytes: number;
  agent: PinnedHttpsAgent;
  /** Whether to read the body of this answer; when false the answer settles at its headers
   *  with an empty body (a status the caller rejects anyway need not wait for its body). */
  readBodyIf?: (status: number, headers: IncomingHttpHeaders) => boolean;
}

export type PinnedHttpsResult =
  /** An answer. tooLarge: the body (declared or read) passed maxBodyBytes, body is incomplete;
   *  readError: reading the body failed. */
  | { status: number; headers: IncomingHttpHeaders; body: Buffer; tooLarge?: number; readError?: Error }
  | { error: 'timeout' }
  | { error: 'request'; cause: NodeJS.ErrnoException };

/** Sends one request; never throws, and settles once: the first of answer, error or timeout. */
export function pinnedHttpsRequest(r: PinnedHttpsRequest): Promise<PinnedHttpsResult> {
  return new Promise((resolve) => {
    let settled = false;
    const finish = (result: PinnedHttpsResult): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      req.destroy();
      resolve(result);
    };
    const options: PinnedRequestOptions = {
      host: r.host,
      servername: r.servername,
      port: r.port,
      path: r.path,
      method: r.method,
      agent: r.agent,
      ca: r.ca,
      rejectUnauthorized: true,
      headers: r.headers,
      pinned: { addresses: r.addresses, timeoutMs: r.timeoutMs },
    };
    const req = https.request(options, (res) => readAnswer(res, r, finish));
    const timer = setTimeout(() => finish({ error: 'timeout' }), r.timeoutMs);
    req.on('error', (cause: NodeJS.ErrnoException) => finish({ error: 'request', cause }));
    req.end(r.body);
  });
}

/** Collects at most maxBodyBytes of the answer's body, unless readBodyIf declines it. */
function readAnswer(res: IncomingMessage, r: PinnedHttpsRequest, finish: (result: PinnedHttpsResult) => void): void {
  const status = res.statusCode ?? 0;
  const answer = { status, headers: res.headers, body: Buffer.alloc(0) };
  if (r.readBodyIf && !r.readBodyIf(status, res.headers)) {
    res.resume();
    return finish(answer);
  }
  const declared = Number(res.headers['content-length']);
  if (declared > r.maxBodyBytes) return finish({ ...answer, tooLarge: declared });
  const chunks: Buffer[] = [];
  let size = 0;
  res.on('data', (chunk: Buffer) => {
    size += chunk.length;
    if (size > r.maxBodyBytes) return finish({ ...answer, body: Buffer.concat(chunks), tooLarge: size });
    chunks.push(chunk);
  });
  res.on('end', () => finish({ ...answer, body: Buffer.concat(chunks) }));
  res.on('error', (err) => finish({ ...answer, body: Buffer.concat(chunks), readError: err }));
}
