/**
 * The application end of the inbound benchmark: a node:http server on 127.0.0.1 that takes the
 * POSTs of an inbound route, reads each body to its end, answers 200 and counts them. It checks
 * nothing (no signature, no JSON parse): its own cost stays small and out of the daemon's CPU.
 *
 * A message is counted once, by its X-Service-Webhook-Id (the inbound message's id), so a retried
 * POST would not make a round end early; the first body is kept so a run can show what was posted.
 */
import http from 'node:http';
import { onCleanup } from './cleanup.mjs';

export async function startReceiver() {
  const ids = new Set();
  let posts = 0;
  let bytes = 0;
  let first = null;
  let waiters = [];
  const server = http.createServer((req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      posts++;
      const body = Buffer.concat(chunks);
      bytes += body.length;
      first ??= body;
      ids.add(String(req.headers['x-service-webhook-id']));
      res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
      waiters = waiters.filter((w) => (ids.size >= w.n ? (w.resolve(), false) : true));
    });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  const unregister = onCleanup(() => server.close());
  return {
    url: `http://127.0.0.1:${server.address().port}/inbound`,
    /** Distinct messages posted since the last reset(). */
    get count() {
      return ids.size;
    },
    /** POSTs (retries included) and body bytes since the last reset(). */
    get posts() {
      return posts;
    },
    get bytes() {
      return bytes;
    },
    /** The first body received since start, as JSON. */
    firstJson: () => (first ? JSON.parse(first.toString('utf8')) : null),
    reset() {
      ids.clear();
      posts = 0;
      bytes = 0;
    },
    /** Resolves when n distinct messages were posted since the last reset(); rejects after timeoutMs. */
    waitFor(n, timeoutMs) {
      if (ids.size >= n) return Promise.resolve();
      return new Promise((resolve, reject) => {
        waiters.push({ n, resolve });
        setTimeout(() => reject(new Error(`receiver: ${ids.size} of ${n} messages posted after ${timeoutMs} ms`)), timeoutMs).unref();
      });
    },
    async close() {
      unregister();
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    },
  };
}
