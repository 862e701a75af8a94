import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postWebhook } from '../../src/webhooks/http-post.js';
import { pinnedAgents } from '../../src/webhooks/pinned-agent.js';
import { WebhookTargets } from '../../src/webhooks/targets.js';
import { startResetPeer } from '../support/reset-peer.js';
import { testCert } from '../support/tls-cert.js';

let server: http.Server;
let port: number;
let bytesSent = 0;

beforeAll(async () => {
  server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      if (req.url === '/big') {
        res.writeHead(500);
        // Far more than the cap; the client must stop reading early.
        const chunk = Buffer.alloc(64 * 1024, 'y');
        const pump = () => {
          while (bytesSent < 50 * 1024 * 1024) {
            bytesSent += chunk.length;
            if (!res.write(chunk)) return void res.once('drain', pump);
          }
          res.end();
        };
        res.on('close', () => undefined);
        pump();
      } else if (req.url === '/slow') {
        setTimeout(() => res.writeHead(200).end(), 5_000).unref();
      } else if (req.url === '/redirect') {
        res.writeHead(302, { location: 'http://169.254.169.254/' }).end();
      } else {
        res.writeHead(200).end('fine');
      }
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  port = (server.address() as AddressInfo).port;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
});

const addresses = [{ address: '127.0.0.1', family: 4 as const }];

function post(path: string, timeoutMs = 2_000) {
  return postWebhook({ url: `http://127.0.0.1:${port}${path}`, addresses, headers: { 'content-type': 'application/json' }, body: '{}', timeoutMs, maxResponseBytes: 4096 });
}

describe('postWebhook', () => {
  it('reports a 2xx as success', async () => {
    expect(await post('/ok')).toEqual({ statusCode: 200, error: null });
  });

  it('reads at most the cap of a large error body and keeps a short error text', async () => {
    const r = await post('/big');
    expect(r.statusCode).toBe(500);
    expect(r.error).toMatch(/^HTTP 500: y+$/);
    expect(r.error!.length).toBeLessThanOrEqual(300);
    expect(bytesSent).toBeLessThan(50 * 1024 * 1024);
  });

  it('gives up after the timeout', async () => {
    const started = Date.now();
    const r = await post('/slow', 300);
    expect(r).toEqual({ statusCode: null, error: 'timed out after 300 ms' });
    expect(Date.now() - started).toBeLessThan(2_000);
  });

  it('does not follow redirects', async () => {
    expect((await post('/redirect')).statusCode).toBe(302);
  });

  it('connects to the checked address whatever the URL host resolves to', async () => {
    const r = await postWebhook({ url: `http://pinned.invalid:${port}/ok`, addresses, headers: {}, body: '{}', timeoutMs: 2000, maxResponseBytes: 4096 });
    expect(r).toEqual({ statusCode: 200, error: null });
  });

  it('reports a refused connection as an error without a status', async () => {
    const closed = http.createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
    const p = (closed.address() as AddressInfo).port;
    await new Promise((r) => closed.close(r));
    const r = await postWebhook({ url: `http://127.0.0.1:${p}/`, addresses, headers: {}, body: '{}', timeoutMs: 2000, maxResponseBytes: 4096 });
    expect(r.statusCode).toBeNull();
    expect(r.error).toMatch(/ECONNREFUSED/);
  });
});

describe('postWebhook connections', () => {
  /** Nothing listens on these loopback addresses: connecting is refused at once. */
  const refused = [{ address: '127.0.50.1', family: 4 as const }, { address: '127.0.50.2', family: 4 as const }];
  const to = (url: string, addrs: { address: string; family: 4 | 6 }[], extra: Partial<Parameters<typeof postWebhook>[0]> = {}) =>
    postWebhook({ url, addresses: addrs, headers: {}, body: '{}', timeoutMs: 2000, maxResponseBytes: 4096, ...extra });

  it('tries the addresses in order and posts to the first that accepts', async () => {
    expect(await to(`http://hooks.example.test:${port}/ok`, [...refused, ...addresses])).toEqual({ statusCode: 200, error: null });
  });

  it('names every address that failed, with its own error', async () => {
    const r = await to(`http://hooks.example.test:${port}/ok`, refused);
    expect(r).toEqual({ statusCode: null, error: `request failed: connect failed: 127.0.50.1:${port} ECONNREFUSED; 127.0.50.2:${port} ECONNREFUSED` });
  });

  it('reports a peer that resets the connection on the request as a failure', async () => {
    const peer = await startResetPeer({ host: '127.0.0.1', resetOnFirstByte: true });
    try {
      const r = await to(`http://hooks.example.test:${peer.port}/`, addresses);
      expect(r.statusCode).toBeNull();
      expect(r.error).toMatch(/^request failed: .*ECONNRESET$/);
      expect(peer.resets).toBe(1);
    } finally {
      await peer.close();
    }
  });

  it('speaks TLS over the pinned connection, with SNI and the certificate checked for the URL host', async () => {
    const seen: string[] = [];
    const secure = https.createServer(testCert(), (req, res) => {
      seen.push((req.socket as import('node:tls').TLSSocket).servername as string);
      req.resume();
      req.on('end', () => res.writeHead(204).end());
    });
    await new Promise<void>((r) => secure.listen(0, '127.0.0.1', r));
    const p = (secure.address() as AddressInfo).port;
    const agents = pinnedAgents({ ca: testCert().cert });
    try {
      expect(await to(`https://hooks.example.test:${p}/`, addresses, { agents })).toEqual({ statusCode: 204, error: null });
      expect(seen).toEqual(['hooks.example.test']);
      // Same address, another name: the certificate (*.example.test) does not cover it.
      const wrong = await to(`https://hooks.other.test:${p}/`, addresses, { agents });
      expect(wrong.error).toMatch(/^request failed: Hostname\/IP does not match certificate's altnames/);
      // Without the test CA the self-signed certificate is refused.
      expect((await to(`https://hooks.example.test:${p}/`, addresses)).error).toMatch(/self-signed certificate/);
    } finally {
      agents.https.destroy();
      secure.closeAllConnections();
      await new Promise((r) => secure.close(r));
    }
  });

  it('reuses a kept-alive connection of a shared agent for the next request', async () => {
    const agents = pinnedAgents({ keepAlive: true });
    let connections = 0;
    const counting = (): void => void connections++;
    server.on('connection', counting);
    try {
      for (let i = 0; i < 3; i++) expect(await to(`http://hooks.example.test:${port}/ok`, addresses, { agents })).toEqual({ statusCode: 200, error: null });
      expect(connections).toBe(1);
    } finally {
      server.off('connection', counting);
      agents.http.destroy();
    }
  });

  it('does not connect once aborted, and gives up a request in flight when aborted (shutdown)', async () => {
    const before = new AbortController();
    before.abort();
    expect(await to(`http://hooks.example.test:${port}/ok`, refused, { signal: before.signal })).toEqual({ statusCode: null, error: 'aborted (shutdown)' });
    const during = new AbortController();
    const pending = to(`http://hooks.example.test:${port}/slow`, addresses, { signal: during.signal });
    await new Promise((r) => server.once('request', r));
    during.abort();
    expect(await pending).toEqual({ statusCode: null, error: 'aborted (shutdown)' });
  });
});

describe('WebhookTargets', () => {
  const fakeDns = (answers: Record<string, string[]>) => ({
    a: async (n: string) => (answers[n] ? { status: 'ok' as const, records: answers[n], ttl: 60 } : { status: 'nxdomain' as const }),
    aaaa: async () => ({ status: 'nodata' as const }),
  });

  it('keeps only the public addresses of a name and refuses one with none', async () => {
    const targets = new WebhookTargets({ allowHttp: false, allowPrivate: false, resolver: fakeDns({ 'mixed.test': ['10.0.0.1', '8.8.4.4'], 'lan.test': ['192.168.0.9'] }) });
    expect(await targets.resolve('mixed.test')).toEqual({ ok: true, addresses: [{ address: '8.8.4.4', family: 4 }] });
    expect(await targets.resolve('lan.test')).toMatchObject({ ok: false, kind: 'refused' });
    expect(await targets.resolve('gone.test')).toMatchObject({ ok: false, kind: 'nxdomain' });
  });

  it('allows private targets and http only when configured', async () => {
    const open = new WebhookTargets({ allowHttp: true, allowPrivate: true, resolver: fakeDns({}) });
    expect(await open.checkUrl('http://127.0.0.1:9/x')).toBeNull();
    const strict = new WebhookTargets({ allowHttp: false, allowPrivate: false, resolver: fakeDns({}) });
    expect(await strict.checkUrl('http://8.8.8.8/x')).toMatchObject({ code: 'insecure_url' });
    expect(await strict.checkUrl('https://8.8.8.8/x')).toBeNull();
    expect(await strict.checkUrl('https://[fe80::1]/x')).toMatchObject({ code: 'forbidden_address' });
    expect(await strict.checkUrl('https://[fd00::1]/x')).toMatchObject({ code: 'forbidden_address' });
  });
});
