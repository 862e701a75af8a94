/**
 * RSET on a kept connection (RFC 5321 4.1.1.5) when the server offers PIPELINING (RFC 2920):
 * written in one write with the next transaction's MAIL FROM, RCPT TO and DATA; awaited on its
 * own without PIPELINING; a refused pipelined RSET sends the message over a new connection and
 * nothing of it over the refused one. A raw TCP server sees how the client's bytes arrive.
 */
import net from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { ConnectionCache } from '../../src/delivery/connection-cache.js';
import { deliverOverSmtp, type SmtpConnectionCache } from '../../src/delivery/smtp-client.js';
import { rawMessage } from '../support/delivery.js';

const TIMEOUTS = { connectMs: 2000, greetingMs: 5000, commandMs: 5000, dataMs: 5000 };

interface RawSink {
  port: number;
  /** Per connection, each chunk of bytes as read from the socket. */
  chunks: string[][];
  /** Messages received (the end-of-data line seen), per connection. */
  messages: number[];
  close(): Promise<void>;
}

const servers: net.Server[] = [];
const caches: SmtpConnectionCache[] = [];

afterEach(async () => {
  await Promise.all(caches.splice(0).map((c) => c.close()));
  await Promise.all(servers.splice(0).map((s) => new Promise((resolve) => s.close(resolve))));
});

/** A minimal SMTP server: every command 250, DATA 354, `rset` is the reply to RSET. */
async function startRawSink(o: { pipelining: boolean; rset?: string }): Promise<RawSink> {
  const sink: RawSink = { port: 0, chunks: [], messages: [], close: async () => undefined };
  const server = net.createServer((socket) => {
    const i = sink.chunks.push([]) - 1;
    sink.messages.push(0);
    let buffered = '';
    let inData = false;
    socket.on('error', () => undefined);
    socket.write('220 raw.sink-mail.net ESMTP\r\n');
    socket.on('data', (chunk) => {
      sink.chunks[i].push(chunk.toString('latin1'));
      buffered += chunk.toString('latin1');
      for (;;) {
        if (inData) {
          const end = buffered.indexOf('\r\n.\r\n');
          if (end === -1) return;
          buffered = buffered.slice(end + 5);
          inData = false;
          sink.messages[i]++;
          socket.write('250 2.0.0 queued\r\n');
          continue;
        }
        const eol = buffered.indexOf('\r\n');
        if (eol === -1) return;
        const line = buffered.slice(0, eol).toUpperCase();
        buffered = buffered.slice(eol + 2);
        if (line.startsWith('EHLO')) socket.write(`250-raw.sink-mail.net\r\n${o.pipelining ? '250-PIPELINING\r\n' : ''}250 8BITMIME\r\n`);
        else if (line === 'RSET') socket.write(`${o.rset ?? '250 2.0.0 OK'}\r\n`);
        else if (line === 'DATA') {
          inData = true;
          socket.write('354 go ahead\r\n');
        } else if (line === 'QUIT') socket.end('221 bye\r\n');
        else socket.write('250 2.1.0 OK\r\n');
      }
    });
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  sink.port = (server.address() as net.AddressInfo).port;
  return sink;
}

function send(sink: RawSink, cache: SmtpConnectionCache) {
  return deliverOverSmtp({
    targets: [{ host: 'mx.raw-mail.net', address: '127.0.0.1' }],
    port: sink.port,
    heloName: 'postrider.test',
    sender: 'bounces@sender.test',
    recipients: ['ann@raw-mail.net'],
    body: rawMessage('news@sender.test', ['ann@raw-mail.net']),
    timeouts: TIMEOUTS,
    cache,
  });
}

function newCache(): SmtpConnectionCache {
  const cache: SmtpConnectionCache = new ConnectionCache({ maxMessages: 100, idleMs: 5000 });
  caches.push(cache);
  return cache;
}

describe('RSET on a kept connection', () => {
  it('goes out in one write with the next MAIL FROM, RCPT TO and DATA when the server offers PIPELINING', async () => {
    const sink = await startRawSink({ pipelining: true });
    const cache = newCache();
    const results = [await send(sink, cache), await send(sink, cache)];
    expect(results.map((r) => [r.recipients[0].outcome, r.reused])).toEqual([
      ['delivered', false],
      ['delivered', true],
    ]);
    expect(sink.chunks).toHaveLength(1);
    expect(sink.chunks[0]).toContain('RSET\r\nMAIL FROM:<bounces@sender.test>\r\nRCPT TO:<ann@raw-mail.net>\r\nDATA\r\n');
    expect(sink.messages).toEqual([2]);
  });

  it('is awaited on its own without PIPELINING', async () => {
    const sink = await startRawSink({ pipelining: false });
    const cache = newCache();
    expect((await send(sink, cache)).recipients[0].outcome).toBe('delivered');
    expect(await send(sink, cache)).toMatchObject({ reused: true, recipients: [{ outcome: 'delivered' }] });
    expect(sink.chunks[0]).toContain('RSET\r\n');
    expect(sink.messages).toEqual([2]);
  });

  it('refused while pipelined: the message goes over a new connection, nothing of it over the refused one', async () => {
    const sink = await startRawSink({ pipelining: true, rset: '421 4.3.2 shutting down' });
    const cache = newCache();
    expect((await send(sink, cache)).recipients[0].outcome).toBe('delivered');
    const next = await send(sink, cache);
    expect(next).toMatchObject({ reused: false, recipients: [{ outcome: 'delivered' }] });
    expect(sink.messages).toEqual([1, 1]);
    expect(sink.chunks[0].join('')).not.toMatch(/Subject:[\s\S]*Subject:/);
  });
});
