/**
 * Write load on a child daemon: senders that post transactional messages to a sandbox channel
 * (the whole pipeline runs: render, sign, one durable LMDB write per message; nothing leaves
 * the machine) until stopped or until the daemon goes away.
 */
import crypto from 'node:crypto';
import { expect } from 'vitest';
import type { ChildDaemon } from './child-daemon.js';

export interface WriteLoad {
  /** messageIds answered 200: each must be on disk. */
  accepted: string[];
  /** Resolves once `n` more messages were accepted than when it was called. */
  acceptedMore(n: number, timeoutMs?: number): Promise<void>;
  /** Stops the senders, cutting off requests in flight, and waits for them. */
  stop(): Promise<void>;
}

export async function startWriteLoad(d: ChildDaemon, senders = 8): Promise<WriteLoad> {
  const ch = await d.api('POST', '/channels', { body: { name: 'load', deliveryType: 'sandbox' } });
  expect(ch.status).toBe(200);
  const domain = `load-${crypto.randomBytes(3).toString('hex')}.com`;
  const dom = await d.api('POST', '/domains', { body: { name: domain, channelIds: [ch.body.id], dkimAlgorithm: 'ed25519' } });
  expect(dom.status, JSON.stringify(dom.body)).toBe(200);
  const key = d.apiKey;
  const accepted: string[] = [];
  const waiters = new Set<() => void>();
  let running = true;
  // stop() cuts off requests in flight, so a daemon that stopped answering cannot hold it up.
  const cutOff = new AbortController();
  const send = async (n: number) => {
    for (let i = 0; running && d.alive; i++) {
      try {
        const res = await fetch(`${d.url}/send/transactional`, {
          method: 'POST',
          headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'x-service-channel-id': ch.body.id },
          body: JSON.stringify({ from: { email: `app@${domain}` }, to: [{ email: `r${n}-${i}@example.org` }], subject: `load ${n} ${i}`, text: 'load' }),
          signal: cutOff.signal,
        });
        const body = (await res.json()) as { messageId?: string };
        if (res.status === 200 && body.messageId) accepted.push(body.messageId);
        for (const w of waiters) w();
      } catch {
        // Refused or cut off while the daemon stops: the sender was not told 200.
        await new Promise((r) => setTimeout(r, 5));
      }
    }
  };
  const all = Array.from({ length: senders }, (_, n) => send(n));
  return {
    accepted,
    acceptedMore(n, timeoutMs = 20_000) {
      const target = accepted.length + n;
      return new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`fewer than ${n} sends accepted within ${timeoutMs} ms`)), timeoutMs);
        const check = () => {
          if (accepted.length < target) return;
          clearTimeout(timer);
          waiters.delete(check);
          resolve();
        };
        waiters.add(check);
        check();
      });
    },
    async stop() {
      running = false;
      cutOff.abort();
      await Promise.all(all);
    },
  };
}
