import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postWebhook } from '../../src/webhooks/http-post.js';
import { WebhookTargets } from '../../src/webhooks/targets.js';

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
