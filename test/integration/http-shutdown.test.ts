/**
 * Graceful shutdown of the HTTP listener (Daemon.stop, as SIGTERM runs it): the port closes at
 * once, a request in flight finishes with its answer, a request that arrives on an open
 * connection afterwards gets a 503 problem with Retry-After and `Connection: close`, and idle
 * keep-alive connections do not hold the shutdown (shutdown.graceMs is set far beyond the test
 * timeout, so waiting for the grace period would fail the test).
 */
import net from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { startDaemon, type TestDaemon } from '../support/daemon.js';
import { waitFor } from '../support/wait.js';

let t: TestDaemon | null = null;

afterEach(async () => {
  await t?.stop();
  t = null;
});

interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** A raw HTTP/1.1 connection that reads complete responses (Content-Length framed) in order. */
class RawConnection {
  readonly socket: net.Socket;
  readonly closed: Promise<void>;
  private buffer = '';
  private waiting: (() => void) | null = null;

  constructor(port: number) {
    this.socket = net.connect(port, '127.0.0.1');
    this.socket.setEncoding('utf8');
    this.socket.on('data', (d: string) => {
      this.buffer += d;
      this.waiting?.();
    });
    this.closed = new Promise((resolve) => this.socket.once('close', () => resolve()));
    this.socket.on('error', () => undefined);
  }

  connected(): Promise<void> {
    return new Promise((resolve) => this.socket.once('connect', () => resolve()));
  }

  write(s: string): void {
    this.socket.write(s);
  }

  async response(): Promise<RawResponse> {
    for (;;) {
      const parsed = this.take();
      if (parsed) return parsed;
      await new Promise<void>((resolve) => (this.waiting = resolve));
    }
  }

  private take(): RawResponse | null {
    const end = this.buffer.indexOf('\r\n\r\n');
    if (end < 0) return null;
    const [statusLine, ...lines] = this.buffer.slice(0, end).split('\r\n');
    const headers: Record<string, string> = {};
    for (const l of lines) {
      const i = l.indexOf(':');
      headers[l.slice(0, i).trim().toLowerCase()] = l.slice(i + 1).trim();
    }
    const length = Number(headers['content-length'] ?? 0);
    if (this.buffer.length < end + 4 + length) return null;
    const body = this.buffer.slice(end + 4, end + 4 + length);
    this.buffer = this.buffer.slice(end + 4 + length);
    return { status: Number(statusLine.split(' ')[1]), headers, body };
  }
}

function portRefuses(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = net.connect(port, '127.0.0.1');
    s.once('connect', () => {
      s.destroy();
      resolve(false);
    });
    s.once('error', () => resolve(true));
  });
}

function channelRequest(key: string, body: string): string {
  return (
    `POST /channels HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer ${key}\r\n` +
    `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n`
  );
}

describe('HTTP listener on shutdown', () => {
  it('finishes a request in flight and answers one that starts afterwards 503 with Retry-After', async () => {
    t = await startDaemon({ 'shutdown.graceMs': 120_000 });
    const port = t.daemon.http.port;
    // A: headers and half of the body sent, so its request is in flight when shutdown starts.
    const a = new RawConnection(port);
    await a.connected();
    const body = JSON.stringify({ name: 'in flight' });
    a.write(channelRequest(t.apiKey, body) + body.slice(0, 5));
    // B: the first bytes of a request line only; the connection is busy, not idle, so it is
    // not closed, and its request is complete only after the shutdown began.
    const b = new RawConnection(port);
    await b.connected();
    b.write('GET /chan');
    await waitFor(async () => (await fetch(`${t!.url}/health`)).status === 200, { what: 'the health check to answer 200' });
    const stopped = t.daemon.stop();
    await waitFor(() => portRefuses(port), { what: 'the listening port to refuse connections' });

    b.write(`nels HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer ${t.apiKey}\r\n\r\n`);
    const late = await b.response();
    expect(late.status).toBe(503);
    expect(late.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(late.headers['retry-after']).toBe('5');
    expect(late.headers.connection).toBe('close');
    expect(JSON.parse(late.body)).toMatchObject({ status: 503, code: 'service_unavailable' });
    await b.closed;

    a.write(body.slice(5));
    const first = await a.response();
    expect(first.status, first.body).toBe(200);
    expect(JSON.parse(first.body).name).toBe('in flight');
    expect(first.headers.connection).toBe('close');
    await a.closed;
    await stopped;
  });

  it('does not wait for idle keep-alive connections', async () => {
    t = await startDaemon({ 'shutdown.graceMs': 120_000 });
    const conn = new RawConnection(t.daemon.http.port);
    await conn.connected();
    conn.write(`GET /channels HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer ${t.apiKey}\r\n\r\n`);
    const res = await conn.response();
    expect(res.status).toBe(200);
    expect(res.headers.connection).toBe('keep-alive');
    // Longer than clients keep idle connections (Go 90 s, .NET 60 s): server.ts keepAliveTimeout.
    expect(res.headers['keep-alive']).toBe('timeout=72');
    // Idle now. stop() must close it and return long before the 120 s grace period.
    await t.daemon.stop();
    await conn.closed;
  });
});
