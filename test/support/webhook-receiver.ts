/**
 * A webhook endpoint for tests: node:http on 127.0.0.1, recording every request. Each path can
 * be given its own behaviour (status, an answer given later, never answering), so one receiver serves many
 * webhooks of one test file.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReceivedRequest {
  path: string;
  method: string;
  headers: http.IncomingHttpHeaders;
  body: string;
  json: any;
  atMs: number;
}

export interface Answer {
  status: number;
  body?: string;
}

/** Answers one request: a status (and body), 'hang' to never answer, or a promise of an answer given later. */
export type Behaviour = (r: ReceivedRequest, index: number) => Answer | 'hang' | Promise<Answer>;

export interface WebhookReceiver {
  url(path: string): string;
  port: number;
  received: ReceivedRequest[];
  on(path: string, behaviour: Behaviour): void;
  at(path: string): ReceivedRequest[];
  close(): Promise<void>;
}

export async function startWebhookReceiver(): Promise<WebhookReceiver> {
  const received: ReceivedRequest[] = [];
  const behaviours = new Map<string, Behaviour>();
  const hanging = new Set<http.ServerResponse>();
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      let json: unknown;
      try {
        json = JSON.parse(body);
      } catch {
        json = undefined;
      }
      const path = req.url ?? '/';
      const r: ReceivedRequest = { path, method: req.method ?? '', headers: req.headers, body, json, atMs: Date.now() };
      const index = received.filter((x) => x.path === path).length;
      received.push(r);
      const answer = (behaviours.get(path) ?? (() => ({ status: 200, body: 'ok' })))(r, index);
      if (answer === 'hang') {
        hanging.add(res);
        return;
      }
      const reply = (a: Answer) => res.writeHead(a.status, { 'content-type': 'text/plain' }).end(a.body ?? '');
      if (answer instanceof Promise) {
        hanging.add(res);
        void answer.then((a) => {
          hanging.delete(res);
          reply(a);
        });
        return;
      }
      reply(answer);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    port,
    received,
    url: (path) => `http://127.0.0.1:${port}${path}`,
    on: (path, behaviour) => behaviours.set(path, behaviour),
    at: (path) => received.filter((r) => r.path === path),
    async close() {
      for (const res of hanging) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
