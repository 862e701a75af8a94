/** Sends for the Activity, message and Sandbox inbox browser tests: through the API, as users do. */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'vitest';
import type { Sender } from '../support/sending.js';
import { signedBody } from '../support/signing.js';
import type { Rig } from './harness.js';

export async function sendMail(rig: Rig, s: Sender, body: Record<string, unknown>): Promise<string> {
  const r = await rig.t.api('POST', '/send/transactional', {
    headers: { 'x-service-channel-id': s.channelId },
    body: { from: { email: `app@${s.domain}`, name: 'Demo App' }, to: [{ email: 'reader@inbox-demo.net' }], subject: 'hello', text: 'hi', ...body },
  });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  // Composed and signed after the commit: the header fields exist from then on.
  await signedBody(rig.t.daemon.store, r.body.messageId);
  return r.body.messageId;
}

/** A web server that counts the requests it gets (a remote image's server: did the browser ask?). */
export interface PixelServer {
  base: string;
  hits: string[];
  close(): Promise<void>;
}

const PNG_1X1 = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==', 'base64');

export async function startPixelServer(): Promise<PixelServer> {
  const hits: string[] = [];
  const server = http.createServer((req, res) => {
    hits.push(req.url ?? '');
    res.writeHead(200, { 'content-type': 'image/png', 'cache-control': 'no-store' }).end(PNG_1X1);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { base: `http://127.0.0.1:${port}`, hits, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}
