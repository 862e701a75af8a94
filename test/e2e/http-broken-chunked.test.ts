/**
 * A chunked request that the daemon answers without reading its body (no Content-Type: 415), whose
 * chunk framing then breaks, so that Node aborts the request stream under the body-budget counter
 * (src/http/body-budget.ts) after Fastify stopped listening. Found by the raw HTTP fuzz soak: one
 * such request to a public route, no key needed, ended the daemon with an uncaught "aborted".
 * A child daemon, so that a crash is seen as one. Also: the lingering close after an early answer
 * (the last describe).
 */
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ChildDaemon } from '../support/child-daemon.js';

let d: ChildDaemon;

beforeAll(async () => {
  d = new ChildDaemon();
  await d.start();
});

afterAll(async () => {
  await d?.close();
});

/** Sends the bytes, half-closes, and resolves with what came back once the server closed. */
function exchange(bytes: string): Promise<string> {
  return new Promise((resolve) => {
    let answer = '';
    const sock = net.connect({ port: d.httpPort, host: '127.0.0.1' }, () => sock.end(Buffer.from(bytes, 'latin1')));
    sock.setEncoding('latin1');
    sock.on('data', (c: string) => (answer += c));
    sock.on('error', () => undefined);
    sock.on('close', () => resolve(answer));
  });
}

describe('a chunked body with broken framing that nobody reads', () => {
  it('is answered and leaves the daemon running, on a public route and on an authenticated one', async () => {
    const broken = 'Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n\r\n\r\n\r\n\r\nE\r\n{"name":"raw"}\r\n0\r\n\r\n';
    const requests = [
      `POST /dashboard/session HTTP/1.1\r\nHost: x\r\n${broken}`,
      `POST /channels HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${d.apiKey}\r\n${broken}`,
      `POST /dashboard/session HTTP/1.1\r\nHost: x\r\nContent-Type: text/plain\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhel`,
    ];
    for (const r of requests) {
      const answer = await exchange(r);
      expect(answer).toMatch(/^HTTP\/1\.1 4\d\d /);
    }
    const health = await d.api('GET', '/health', { key: null });
    expect(health.status).toBe(200);
    expect(d.alive).toBe(true);
    expect(d.logRecords().filter((l) => (l as { level?: number }).level === 60)).toEqual([]);
  });
});

/**
 * An answer sent before the body was read reaches a client that is still sending that body
 * (RFC 9112 9.6, src/http/lingering-close.ts). A body over the route's limit is answered 413 with
 * Connection: close at once; closing the socket with unread data made the kernel reset it, and
 * fetch (undici, as the official SDKs use) then failed with "write EPIPE" instead of the 413:
 * about 3 in 20 requests with a 2 MiB body, and the HTTP fuzzing soak's "no answer". It needs the
 * child daemon: in one process the client's writes and the server's close take turns and the race
 * never shows.
 */
describe('a body over the limit, still being sent when the answer comes', () => {
  it('gets fetch its 413 for every one of 40 bodies of 2 MiB to a public route, instead of a reset while it writes', async () => {
    const body = ' '.repeat(2 * 1024 * 1024);
    const outcomes: string[] = [];
    for (let i = 0; i < 40; i++) {
      try {
        const res = await fetch(`http://127.0.0.1:${d.httpPort}/dashboard/session`, {
          method: 'DELETE',
          headers: { 'content-type': 'application/json', 'x-postrider-dashboard': '1' },
          body,
        });
        outcomes.push(`${res.status} ${res.headers.get('connection')} ${((await res.json()) as { code?: string }).code}`);
      } catch (err) {
        outcomes.push(`no answer: ${String(err instanceof Error && err.cause ? err.cause : err)}`);
      }
    }
    expect(new Set(outcomes)).toEqual(new Set(['413 close payload_too_large']));
  });
});
