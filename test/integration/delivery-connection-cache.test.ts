/**
 * Connection reuse in delivery (issue #20): real smtp-server sinks on loopback addresses
 * (127.0.11.x) that count connections (onConnect/onClose) and log every command per connection,
 * and the real SMTP client with a real ConnectionCache; the last tests run the whole
 * DeliveryService through the test DNS server.
 */
import type { Readable } from 'node:stream';
import { SMTPServer } from 'smtp-server';
import { afterEach, describe, expect, it } from 'vitest';
import { ConnectionCache } from '../../src/delivery/connection-cache.js';
import type { DeliveryService } from '../../src/delivery/dispatcher.js';
import { deliverOverSmtp, type SmtpConnectionCache } from '../../src/delivery/smtp-client.js';
import type { DnsResolver } from '../../src/dns/resolver.js';
import { routeTo } from '../support/delivery-rig.js';
import { allSent, openTestStore, queueMessage, rawMessage, TEST_SMTP_TIMEOUTS, testDeliveryService, type TestStore } from '../support/delivery.js';
import { startDnsServer, testResolver } from '../support/dns-server.js';
import { testCert } from '../support/tls-cert.js';
import { waitFor } from '../support/wait.js';

interface Sink {
  address: string;
  port: number;
  /** Connections accepted so far. */
  connections: number;
  /** Connections open now (onConnect minus onClose). */
  open: number;
  /** The commands of each connection, in order ("EHLO", "MAIL", "RSET", "QUIT"...). */
  commands: Map<string, string[]>;
  delivered: number;
  /** Replies for the end of DATA, one per message; a 4xx/5xx refuses it. */
  dataReplies: { code: number; message: string }[];
  /** Server-side close of every open connection (a server's idle timeout). */
  dropAll(): void;
  close(): Promise<void>;
}

const sinks: Sink[] = [];

async function startSink(address: string, o: { disabledCommands?: string[]; dataDelayMs?: number; socketTimeout?: number } = {}): Promise<Sink> {
  const sink: Sink = {
    address,
    port: 0,
    connections: 0,
    open: 0,
    commands: new Map(),
    delivered: 0,
    dataReplies: [],
    dropAll: () => {
      for (const c of (server as unknown as { connections: Set<{ close(): void }> }).connections) c.close();
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
  const record = (entry: { tnx?: string; cid?: string; command?: string }) => {
    if (entry?.tnx !== 'command' || !entry.cid || !entry.command) return;
    sink.commands.set(entry.cid, [...(sink.commands.get(entry.cid) ?? []), entry.command]);
  };
  const quiet = () => undefined;
  const server = new SMTPServer({
    ...testCert(),
    name: `sink-${address}`,
    logger: { debug: record, info: quiet, warn: quiet, error: quiet, trace: quiet, fatal: quiet } as never,
    authOptional: true,
    disabledCommands: ['AUTH', ...(o.disabledCommands ?? [])],
    // The server's own idle timeout: it answers "421 Timeout - closing connection" and closes.
    ...(o.socketTimeout ? { socketTimeout: o.socketTimeout } : {}),
    onConnect(_session, cb) {
      sink.connections++;
      sink.open++;
      cb();
    },
    onClose() {
      sink.open--;
    },
    onData(stream: Readable, _session, cb) {
      stream.resume();
      stream.on('end', () => {
        const reply = sink.dataReplies.shift();
        const answer = () => {
          if (reply && reply.code >= 400) return cb(Object.assign(new Error(reply.message), { responseCode: reply.code }));
          sink.delivered++;
          cb(null, reply?.message);
        };
        setTimeout(answer, o.dataDelayMs ?? 0);
      });
    },
  });
  server.on('error', () => undefined);
  await new Promise<void>((resolve) => server.listen(0, address, resolve));
  sink.port = (server.server.address() as { port: number }).port;
  sinks.push(sink);
  return sink;
}

/** Each connection's commands from MAIL FROM on (the session setup left out). */
function transactions(sink: Sink): string[][] {
  return [...sink.commands.values()].map((cmds) => cmds.slice(cmds.indexOf('MAIL')));
}

function send(sink: Sink, cache: SmtpConnectionCache, o: { to?: string; maxMessagesPerConnection?: number } = {}) {
  const to = o.to ?? 'ann@sink-mail.net';
  return deliverOverSmtp({
    targets: [{ host: 'mx.sink-mail.net', address: sink.address }],
    port: sink.port,
    heloName: 'postrider.test',
    sender: 'bounces@sender.test',
    recipients: [to],
    body: rawMessage('news@sender.test', [to]),
    timeouts: TEST_SMTP_TIMEOUTS,
    cache,
    maxMessagesPerConnection: o.maxMessagesPerConnection,
  });
}

const caches: SmtpConnectionCache[] = [];
function newCache(o: { maxMessages?: number; idleMs?: number } = {}): SmtpConnectionCache {
  const cache: SmtpConnectionCache = new ConnectionCache({ maxMessages: o.maxMessages ?? 100, idleMs: o.idleMs ?? 5000 });
  caches.push(cache);
  return cache;
}

afterEach(async () => {
  await Promise.all(caches.splice(0).map((c) => c.close()));
  await Promise.all(sinks.splice(0).map((s) => s.close()));
});

describe('the connection cache', () => {
  it('sends five messages to one destination over one connection, with RSET between the transactions', async () => {
    const sink = await startSink('127.0.11.2');
    const cache = newCache();
    const results = [];
    for (let i = 0; i < 5; i++) results.push(await send(sink, cache));
    expect(results.map((r) => [r.recipients[0].outcome, r.reused, r.tls])).toEqual([
      ['delivered', false, true],
      ['delivered', true, true],
      ['delivered', true, true],
      ['delivered', true, true],
      ['delivered', true, true],
    ]);
    expect(sink.connections).toBe(1);
    expect(sink.delivered).toBe(5);
    const [tx] = transactions(sink);
    expect(tx.filter((c) => c === 'RSET')).toHaveLength(4);
    // RFC 5321 4.1.1.5: each later transaction starts with RSET, right before its MAIL FROM.
    const mails = tx.flatMap((c, i) => (c === 'MAIL' ? [i] : []));
    expect(mails.slice(1).map((i) => tx[i - 1])).toEqual(['RSET', 'RSET', 'RSET', 'RSET']);
  });

  it('opens a new connection after delivery.maxMessagesPerConnection messages and quits the full one', async () => {
    const sink = await startSink('127.0.11.3');
    const cache = newCache({ maxMessages: 2 });
    const reused = [];
    for (let i = 0; i < 5; i++) reused.push((await send(sink, cache)).reused);
    expect(reused).toEqual([false, true, false, true, false]);
    expect(sink.connections).toBe(3);
    await waitFor(() => sink.open === 1, { what: 'the two full connections to be closed' });
    expect(transactions(sink).slice(0, 2).map((tx) => tx.at(-1))).toEqual(['QUIT', 'QUIT']);
  });

  it("applies an MX site's own messages-per-connection limit over the default", async () => {
    const sink = await startSink('127.0.11.12');
    const cache = newCache({ maxMessages: 100 });
    const reused = [];
    for (let i = 0; i < 3; i++) reused.push((await send(sink, cache, { maxMessagesPerConnection: 1 })).reused);
    expect(reused).toEqual([false, false, false]);
    expect(sink.connections).toBe(3);
  });

  it('quits a connection that stayed idle for delivery.connectionIdleMs', async () => {
    const sink = await startSink('127.0.11.4');
    const cache = newCache({ idleMs: 150 });
    await send(sink, cache);
    expect(cache.idleCount).toBe(1);
    await waitFor(() => sink.open === 0, { what: 'the server to see the idle connection close' });
    expect(cache.idleCount).toBe(0);
    expect(transactions(sink)[0].at(-1)).toBe('QUIT');
    expect((await send(sink, cache)).reused).toBe(false);
    expect(sink.connections).toBe(2);
  });

  it('delivers the next message over a new connection when the server closed the idle one', async () => {
    const sink = await startSink('127.0.11.5');
    const cache = newCache();
    await send(sink, cache);
    sink.dropAll();
    await waitFor(() => sink.open === 0, { what: 'the server to drop the idle connection' });
    const next = await send(sink, cache);
    expect(next).toMatchObject({ reused: false, recipients: [{ outcome: 'delivered' }] });
    expect(sink.connections).toBe(2);
  });

  it('forgets a kept connection that the server ended with an unsolicited 421 at its own idle timeout', async () => {
    const sink = await startSink('127.0.11.14', { socketTimeout: 200 });
    const cache = newCache();
    await send(sink, cache);
    await waitFor(() => sink.open === 0, { what: 'the server to time the idle connection out' });
    await waitFor(() => cache.idleCount === 0, { what: 'the cache to forget the closed connection' });
    const next = await send(sink, cache);
    expect(next).toMatchObject({ reused: false, recipients: [{ outcome: 'delivered' }] });
    expect(sink.connections).toBe(2);
  });

  it('delivers the next message over a new connection when the kept one refuses RSET', async () => {
    const sink = await startSink('127.0.11.6', { disabledCommands: ['RSET'] });
    const cache = newCache();
    await send(sink, cache);
    const next = await send(sink, cache);
    expect(next).toMatchObject({ reused: false, recipients: [{ outcome: 'delivered' }] });
    expect(sink.connections).toBe(2);
    expect(sink.delivered).toBe(2);
    await waitFor(() => sink.open === 1, { what: 'the connection that refused RSET to be closed' });
  });

  it('does not reuse a connection whose transaction failed', async () => {
    const sink = await startSink('127.0.11.7');
    const cache = newCache();
    sink.dataReplies.push({ code: 554, message: '5.6.0 Message refused' });
    const refused = await send(sink, cache);
    expect(refused.recipients[0]).toMatchObject({ outcome: 'bounced', smtpCode: 554 });
    expect(cache.idleCount).toBe(0);
    const next = await send(sink, cache);
    expect(next).toMatchObject({ reused: false, recipients: [{ outcome: 'delivered' }] });
    expect(sink.connections).toBe(2);
    expect(transactions(sink)[0].at(-1)).toBe('QUIT');
  });

  it('discards the connection that got a 421 and closes the other idle ones to that destination', async () => {
    const sink = await startSink('127.0.11.8');
    const cache = newCache();
    // Two attempts at once: two connections, both kept.
    await Promise.all([send(sink, cache), send(sink, cache)]);
    expect(cache.idleCount).toBe(2);
    sink.dataReplies.push({ code: 421, message: '4.7.0 Try again later, closing connection' });
    const slowed = await send(sink, cache);
    expect(slowed).toMatchObject({ reused: true, recipients: [{ outcome: 'deferred', smtpCode: 421 }] });
    expect(cache.idleCount).toBe(0);
    await waitFor(() => sink.open === 0, { what: 'every connection to the destination to be closed' });
    expect((await send(sink, cache)).reused).toBe(false);
    expect(sink.connections).toBe(3);
  });

  it('closes the idle connections after a rate-limit reply (4.7.x) too', async () => {
    const sink = await startSink('127.0.11.9');
    const cache = newCache();
    await Promise.all([send(sink, cache), send(sink, cache)]);
    sink.dataReplies.push({ code: 451, message: '4.7.28 Our system has detected an unusual rate of mail, temporarily rate limited' });
    const slowed = await send(sink, cache);
    expect(slowed.recipients[0]).toMatchObject({ outcome: 'deferred', category: 'rate_limited' });
    expect(cache.idleCount).toBe(0);
    await waitFor(() => sink.open === 0, { what: 'every connection to the destination to be closed' });
  });

  it('quits every idle connection when closed, and a connection given back afterwards at once', async () => {
    const sink = await startSink('127.0.11.10');
    const cache = newCache();
    await Promise.all([send(sink, cache), send(sink, cache), send(sink, cache)]);
    expect(sink.open).toBe(3);
    const late = send(sink, cache);
    await cache.close();
    await late;
    await waitFor(() => sink.open === 0, { what: 'the server to see every connection close' });
    for (const tx of transactions(sink)) expect(tx.at(-1)).toBe('QUIT');
  });
});

describe('connection reuse in the DeliveryService', () => {
  let t: TestStore | undefined;
  let service: DeliveryService | undefined;
  let stopDns: (() => Promise<void>) | undefined;
  let resolver: DnsResolver | undefined;

  afterEach(async () => {
    await service?.stop();
    resolver?.stop();
    await stopDns?.();
    await t?.close();
    service = t = resolver = stopDns = undefined;
  });

  async function startService(sink: Sink, overrides: Record<string, unknown> = {}): Promise<DeliveryService> {
    const dns = await startDnsServer();
    stopDns = () => dns.close();
    routeTo(dns, 'reuse-mail.net', sink.address);
    resolver = testResolver(dns);
    t = await openTestStore();
    service = testDeliveryService(t.store, resolver, { 'delivery.port': sink.port, 'delivery.rate': 1000, ...overrides });
    await service.start();
    return service;
  }

  it('delivers twenty messages to one sink over fewer connections than messages, and stop() leaves none open', async () => {
    const sink = await startSink('127.0.11.11');
    await startService(sink);
    const ids: string[] = [];
    for (let i = 0; i < 20; i++) ids.push(await queueMessage(t!.store, { to: [`r${i}@reuse-mail.net`] }));
    service!.notify();
    await waitFor(() => allSent(t!.store, ids), { what: 'all twenty messages to be sent' });
    expect(sink.delivered).toBe(20);
    expect(sink.connections).toBeLessThan(20);
    expect(sink.open).toBeGreaterThan(0);
    await service!.stop();
    await waitFor(() => sink.open === 0, { what: 'stop() to close every kept connection' });
    for (const tx of transactions(sink)) expect(tx.at(-1)).toBe('QUIT');
  });

  it('closes a connection that was in use during stop() once its transaction ended', async () => {
    const sink = await startSink('127.0.11.13', { dataDelayMs: 300 });
    await startService(sink);
    const id = await queueMessage(t!.store, { to: ['slow@reuse-mail.net'] });
    service!.notify();
    await waitFor(() => sink.open === 1 && [...sink.commands.values()].some((c) => c.includes('DATA')), { what: 'the message to be in DATA' });
    await service!.stop();
    expect((await t!.store.messages.get(id))?.status).toBe('sent');
    await waitFor(() => sink.open === 0, { what: 'the connection to be closed after its transaction' });
    expect(transactions(sink)[0].at(-1)).toBe('QUIT');
  });
});
