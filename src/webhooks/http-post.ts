/**
 * One webhook request: POST the body to the URL, connecting only to the addresses given (checked
 * by WebhookTargets, tried in order by the pinned agents), within a deadline that covers
 * connecting, sending and reading the response, of which at most maxResponseBytes are read.
 * Never throws, and no network error can escape it: the result says what happened. Redirects
 * are not followed (a 3xx is a failure like any other non-2xx).
 */
import http from 'node:http';
import https from 'node:https';
import { pinnedAgents, type PinnedAgents, type PinnedRequestOptions } from './pinned-agent.js';
import type { ResolvedAddress } from './targets.js';

export interface PostRequest {
  url: string;
  addresses: ResolvedAddress[];
  headers: Record<string, string>;
  /** The body as text, or as its UTF-8 bytes already (sent as they are, without encoding again). */
  body: string | Uint8Array;
  timeoutMs: number;
  maxResponseBytes: number;
  /** Keep-alive agents to share between requests; default: agents for this request alone. */
  agents?: PinnedAgents;
  signal?: AbortSignal;
}

export interface PostResult {
  /** null when no response arrived. */
  statusCode: number | null;
  /** null on a 2xx answer. */
  error: string | null;
}

export type PostFn = (req: PostRequest) => Promise<PostResult>;

const ERROR_TEXT_MAX = 300;

function printable(s: string): string {
  return s.replace(/[\u0000-\u001f\u007f]+/g, ' ').trim().slice(0, ERROR_TEXT_MAX);
}

export const postWebhook: PostFn = (r) =>
  new Promise<PostResult>((resolve) => {
    let settled = false;
    const finish = (result: PostResult): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      r.signal?.removeEventListener('abort', onAbort);
      resolve(result);
    };
    if (r.signal?.aborted) return resolve({ statusCode: null, error: 'aborted (shutdown)' });
    const isHttps = r.url.startsWith('https:');
    const headers = { ...r.headers, 'content-length': String(Buffer.byteLength(r.body)) };
    const agents = r.agents ?? pinnedAgents();
    // The agent connects to exactly the checked addresses, whatever DNS says now.
    const options: PinnedRequestOptions = {
      method: 'POST',
      headers,
      agent: isHttps ? agents.https : agents.http,
      pinned: { addresses: r.addresses, timeoutMs: r.timeoutMs, signal: r.signal },
    };
    let req: http.ClientRequest;
    try {
      req = (isHttps ? https : http).request(r.url, options);
    } catch (err) {
      resolve({ statusCode: null, error: `request failed: ${printable((err as Error).message)}` });
      return;
    }
    const timer = setTimeout(() => {
      req.destroy();
      finish({ statusCode: null, error: `timed out after ${r.timeoutMs} ms` });
    }, r.timeoutMs);
    timer.unref();
    const onAbort = (): void => {
      req.destroy();
      finish({ statusCode: null, error: 'aborted (shutdown)' });
    };
    r.signal?.addEventListener('abort', onAbort, { once: true });
    req.on('error', (err) => finish({ statusCode: null, error: `request failed: ${printable(err.message)}` }));
    req.on('response', (res) => readAnswer(res, r.maxResponseBytes, finish));
    req.end(r.body);
  });

/** Reads at most maxBytes of the answer (the rest of a large body is not read) and says what it was. */
function readAnswer(res: http.IncomingMessage, maxBytes: number, finish: (result: PostResult) => void): void {
  const code = res.statusCode ?? 0;
  const chunks: Buffer[] = [];
  let size = 0;
  const done = (): void => {
    const text = Buffer.concat(chunks).subarray(0, maxBytes).toString('utf8');
    const ok = code >= 200 && code < 300;
    finish({ statusCode: code, error: ok ? null : printable(`HTTP ${code}${text ? `: ${text}` : ''}`) });
  };
  res.on('data', (chunk: Buffer) => {
    chunks.push(chunk);
    size += chunk.length;
    if (size >= maxBytes) {
      done();
      res.destroy();
    }
  });
  res.on('end', done);
  res.on('error', () => done());
  res.on('close', done);
}
