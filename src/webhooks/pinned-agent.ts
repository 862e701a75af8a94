/**
 * HTTP(S) agents whose connections go to the checked addresses of a webhook (WebhookTargets),
 * one address at a time, in the given order.
 *
 * Why not a pinned `lookup` and node's own connect: with several addresses node 20 races them
 * (happy eyeballs, autoSelectFamily), and when every attempt fails synchronously inside
 * connect(), as ENETUNREACH (an IPv6 address on an IPv4-only host) or EINVAL (a blackhole
 * route) do, the socket emits its 'error' before http has attached its listener to it: an
 * uncaught 'error' that ended the daemon, again at every restart while the event stayed queued.
 * Here each attempt is a socket of ours with an 'error' listener from before connect(), to an
 * IP literal (no lookup) with autoSelectFamily off; http gets the socket only once it is
 * connected, or an error through the agent's callback, which it reports on the request.
 * That is why this stays ours rather than an HTTP client package: the clients (undici, got)
 * connect through their own lookup and socket handling, so the SSRF check (WebhookTargets)
 * could not pin the addresses it checked, and the crash above would come back.
 */
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import type { Duplex } from 'node:stream';
import type { ResolvedAddress } from './targets.js';

/** Where a request may connect; passed as the request option `pinned`. */
export interface PinnedTarget {
  addresses: readonly ResolvedAddress[];
  /** For all attempts together; each address gets an equal share of what is left. */
  timeoutMs: number;
  signal?: AbortSignal;
}

export type PinnedRequestOptions = https.RequestOptions & { pinned: PinnedTarget };

type OnCreate = (err: Error | null, stream: Duplex) => void;

/** http:// webhooks. */
export class PinnedHttpAgent extends http.Agent {
  override createConnection(options: http.ClientRequestArgs, onCreate?: OnCreate): Duplex | null | undefined {
    const done = requireCallback(onCreate);
    connectFor(options, 80).then((socket) => done(null, socket), (err: Error) => done(err, undefined as never));
    return undefined;
  }
}

/** https:// webhooks: TLS over the connected socket, SNI and certificate checked against the URL's host. */
export class PinnedHttpsAgent extends https.Agent {
  override createConnection(options: https.RequestOptions, onCreate?: OnCreate): Duplex | null | undefined {
    const done = requireCallback(onCreate);
    connectFor(options, 443).then(
      (socket) => {
        let secure: Duplex | null | undefined;
        try {
          // https.Agent's own: tls.connect over our socket, with its TLS session cache.
          secure = super.createConnection({ ...options, socket } as https.RequestOptions);
        } catch (err) {
          socket.destroy();
          return done(err as Error, undefined as never);
        }
        if (!secure) return done(new Error('TLS connection could not be created'), undefined as never);
        guardErrors(secure);
        done(null, secure);
      },
      (err: Error) => done(err, undefined as never),
    );
    return undefined;
  }
}

export interface PinnedAgents {
  http: PinnedHttpAgent;
  https: PinnedHttpsAgent;
}

export function pinnedAgents(options: https.AgentOptions = {}): PinnedAgents {
  return { http: new PinnedHttpAgent(options), https: new PinnedHttpsAgent(options) };
}

/**
 * Tries each address in order until one accepts the connection. The error names every address
 * with its own failure, e.g. "connect failed: [2001:db8::1]:443 ENETUNREACH; 192.0.2.7:443 ETIMEDOUT".
 */
export async function connectInOrder(target: PinnedTarget, port: number): Promise<net.Socket> {
  // Monotonic: a step of the wall clock must not use up (or stretch) the connect budget.
  const deadline = performance.now() + target.timeoutMs;
  const failures: string[] = [];
  let code = 'ECONNECTION';
  for (let i = 0; i < target.addresses.length; i++) {
    const a = target.addresses[i];
    const remaining = deadline - performance.now();
    if (target.signal?.aborted || remaining <= 0) break;
    try {
      return await connectOne(a, port, Math.ceil(remaining / (target.addresses.length - i)), target.signal);
    } catch (err) {
      const e = err as NodeJS.ErrnoException;
      code = e.code ?? code;
      failures.push(`${a.family === 6 ? `[${a.address}]` : a.address}:${port} ${e.code ?? e.message}`);
    }
  }
  if (target.signal?.aborted) throw Object.assign(new Error('aborted'), { code: 'ABORT_ERR' });
  const why = failures.length > 0 ? failures.join('; ') : 'no address to connect to';
  throw Object.assign(new Error(`connect failed: ${why}`), { code });
}

function connectOne(a: ResolvedAddress, port: number, timeoutMs: number, signal?: AbortSignal): Promise<net.Socket> {
  return new Promise((resolve, reject) => {
    const socket = new net.Socket();
    const timer = setTimeout(() => fail(Object.assign(new Error(`timed out after ${timeoutMs} ms`), { code: 'ETIMEDOUT' })), timeoutMs);
    const onAbort = (): void => fail(Object.assign(new Error('aborted'), { code: 'ABORT_ERR' }));
    const cleanup = (): void => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      socket.off('error', fail);
    };
    function fail(err: Error): void {
      cleanup();
      socket.destroy();
      reject(err);
    }
    // Before connect(): a failure inside connect() itself is emitted to this listener too.
    socket.on('error', fail);
    socket.once('connect', () => {
      cleanup();
      guardErrors(socket);
      resolve(socket);
    });
    signal?.addEventListener('abort', onAbort, { once: true });
    socket.connect({ host: a.address, port, family: a.family, autoSelectFamily: false });
  });
}

/**
 * A listener for the socket's whole life. http attaches its own while a request uses the
 * socket and reports errors there; this one only makes sure that an error emitted while http
 * is not listening (between requests, or in a gap like the one above) cannot end the process.
 */
function guardErrors(socket: Duplex): void {
  socket.on('error', () => socket.destroy());
}

/** Always asynchronous, failures included: http reports them on the request. */
async function connectFor(options: http.ClientRequestArgs, defaultPort: number): Promise<net.Socket> {
  const target = (options as Partial<PinnedRequestOptions>).pinned;
  if (!target) throw new Error('a webhook request without pinned addresses (WebhookTargets.resolve first)');
  const port = Number(options.port);
  return connectInOrder(target, Number.isInteger(port) && port > 0 ? port : defaultPort);
}

function requireCallback(onCreate: OnCreate | undefined): OnCreate {
  if (!onCreate) throw new Error('PinnedAgent connects asynchronously and needs the callback form of createConnection');
  return onCreate;
}
