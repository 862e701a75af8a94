/**
 * DnsResolver against DNS servers that misbehave on the wire, on loopback: a server that sends
 * every answer truncated (TC=1, RFC 1035 4.2.1) and resets the TCP connection the resolver then
 * opens (RFC 7766), and one that answers with bytes that are not a DNS message. Neither may
 * throw or end the process: each lookup ends as a temporary 'error' answer, which delivery turns
 * into a deferral (4.4.3) and webhooks into a retry.
 */
import dgram from 'node:dgram';
import { randomBytes } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { DnsResolver } from '../../src/dns/resolver.js';
import { startResetPeer, type ResetPeer } from '../support/reset-peer.js';

const cleanups: Array<() => Promise<void> | void> = [];

afterEach(async () => {
  for (const c of cleanups.splice(0)) await c();
});

/** A UDP "DNS server" answering every query with what `answer` makes of it. */
async function udpServer(answer: (query: Buffer) => Buffer, port = 0): Promise<{ port: number; queries: number }> {
  const socket = dgram.createSocket('udp4');
  const state = { port: 0, queries: 0 };
  socket.on('message', (q, from) => {
    state.queries++;
    socket.send(answer(q), from.port, from.address);
  });
  await new Promise<void>((resolve, reject) => {
    socket.once('error', reject);
    socket.bind(port, '127.0.0.1', () => resolve());
  });
  state.port = socket.address().port;
  cleanups.push(() => new Promise<void>((r) => socket.close(() => r())));
  return state;
}

/** The query's header and question, as a response with TC=1 and no answers (RFC 1035 4.1.1). */
function truncated(query: Buffer): Buffer {
  const reply = Buffer.from(query);
  reply[2] = 0x80 | (query[2] & 0x79) | 0x02; // QR=1, keep opcode and RD, TC=1
  reply[3] = 0x00;
  reply.writeUInt16BE(0, 6); // ANCOUNT
  reply.writeUInt16BE(0, 8); // NSCOUNT
  reply.writeUInt16BE(0, 10); // ARCOUNT (drops an OPT record if the query had one)
  return reply;
}

function resolverFor(port: number): DnsResolver {
  const r = new DnsResolver({ servers: [`127.0.0.1:${port}`], timeoutMs: 300, tries: 1, cacheMaxEntries: 0 });
  r.start();
  cleanups.push(() => r.stop());
  return r;
}

describe('DnsResolver against misbehaving servers', () => {
  it('reports an error when the answer is truncated and the server resets the TCP retry', async () => {
    // UDP and TCP on the same port, as the resolver retries a truncated answer over TCP there.
    let tcp: ResetPeer | undefined;
    let udp: { port: number; queries: number } | undefined;
    for (let i = 0; i < 5 && !tcp; i++) {
      tcp = await startResetPeer({ host: '127.0.0.1', resetOnFirstByte: true });
      udp = await udpServer(truncated, tcp.port).catch(async () => {
        await tcp!.close();
        tcp = undefined;
        return undefined;
      });
    }
    cleanups.push(() => tcp!.close());
    const resolver = resolverFor(udp!.port);
    // c-ares reports the reset of its TCP connection as ECONNREFUSED.
    expect(await resolver.mx('big.example.test')).toEqual({ status: 'error', error: 'connection refused' });
    expect(udp!.queries).toBeGreaterThanOrEqual(1);
    expect(tcp!.resets).toBeGreaterThanOrEqual(1);
  });

  it('reports an error when the server answers with bytes that are not a DNS message', async () => {
    const udp = await udpServer((q) => Buffer.concat([q.subarray(0, 2), randomBytes(40)]));
    const resolver = resolverFor(udp.port);
    expect(await resolver.a('garbage.example.test')).toEqual({ status: 'error', error: expect.stringMatching(/^EBADRESP/) });
    expect(await resolver.txt('garbage.example.test')).toEqual({ status: 'error', error: expect.stringMatching(/^EBADRESP/) });
    expect(udp.queries).toBeGreaterThanOrEqual(2);
  });
});
