/**
 * One DNS question to the configured recursive resolvers, keeping what node's resolver hides:
 * the AD bit of the answer (RFC 4035 3.2.3) and the raw rdata of types c-ares cannot query
 * (TLSA, type 52). DANE needs both, and nothing else in postrider does, so this client serves
 * src/dane/ only; MX, address and TXT lookups for delivery stay in src/dns/resolver.ts.
 *
 * The query sets AD (RFC 6840 5.7: a validating resolver then reports AD in its answer
 * without our asking for the signatures with DO) and carries an EDNS0 OPT advertising 1232
 * bytes (RFC 6891; the DNS flag day 2020 size), so TLSA sets fit in one datagram. An answer
 * that still arrives truncated (TC=1) is asked again over TCP (RFC 7766), the gap that
 * dns2's own client leaves open for us to fill, which is why only dns2's encoder is used; answers
 * are read by dns-message.ts, in time linear in their size (dns2's decoder is not).
 * Answers are checked against the query: source address and port, ID and question (RFC 5452
 * 9.1); anything else on the socket is ignored. The servers are tried in order: a timeout,
 * a network error or a SERVFAIL/REFUSED moves on to the next, and the last failure is
 * returned when none answers.
 */
import dgram from 'node:dgram';
import net from 'node:net';
import { randomInt } from 'node:crypto';
import dns2 from 'dns2';
import { parseResponse, type DnsResource, type DnsResponse } from './dns-message.js';

const { Packet } = dns2;
type DnsPacket = InstanceType<typeof Packet>;
export type { DnsResource };
/** RFC 1035 4.2.2: a message over TCP is preceded by its two-byte length, so at most 65,535 bytes. */
const TCP_LENGTH_PREFIX = 2;

export const RCODE = { NOERROR: 0, SERVFAIL: 2, NXDOMAIN: 3, REFUSED: 5 } as const;
const EDNS_PAYLOAD = 1232;

export interface DnsServer {
  host: string;
  port: number;
}

export type SecureAnswer =
  | { status: 'answer'; rcode: number; /** AD bit of the response */ ad: boolean; answers: DnsResource[] }
  | { status: 'error'; error: string };

/** Servers in the syntax of parseServers() (src/dns/resolver.ts): 'ip', 'ip:port', '[ipv6]:port', bare IPv6. */
export function toDnsServer(entry: string): DnsServer {
  const bracket = /^\[([^\]]+)\](?::(\d+))?$/.exec(entry);
  if (bracket) return { host: bracket[1], port: Number(bracket[2] ?? 53) };
  if (net.isIPv6(entry)) return { host: entry, port: 53 };
  const [host, port] = entry.split(':');
  return { host, port: Number(port ?? 53) };
}

export async function querySecure(servers: readonly DnsServer[], name: string, type: number, timeoutMs: number): Promise<SecureAnswer> {
  let last: SecureAnswer = { status: 'error', error: 'no DNS server configured' };
  for (const server of servers) {
    try {
      const query = buildQuery(name, type);
      let response = await overUdp(server, query, timeoutMs);
      if (response.tc) response = await overTcp(server, query, timeoutMs);
      const rcode = response.rcode;
      last = { status: 'answer', rcode, ad: response.ad, answers: response.answers };
      if (rcode !== RCODE.SERVFAIL && rcode !== RCODE.REFUSED) return last;
    } catch (err) {
      last = { status: 'error', error: `${server.host}:${server.port}: ${err instanceof Error ? err.message : String(err)}` };
    }
  }
  return last;
}

function buildQuery(name: string, type: number): DnsPacket {
  const query = new Packet();
  query.header.id = randomInt(0x10000);
  query.header.rd = 1;
  (query.header as { ad?: number }).ad = 1;
  query.questions.push({ name, type, class: Packet.CLASS.IN } as DnsPacket['questions'][number]);
  const edns = (Packet.Resource.EDNS as unknown as (rdata: object[], opts: object) => DnsPacket['additionals'][number])([], { udpPayloadSize: EDNS_PAYLOAD });
  query.additionals.push(edns);
  return query;
}

/** RFC 5452 9.1: the answer must come from where we asked, with our ID and our question. */
function answersQuery(query: DnsPacket, response: DnsResponse): boolean {
  const q = query.questions[0];
  const r = response.question;
  return (
    response.id === query.header.id &&
    response.qr === 1 &&
    r !== undefined &&
    r.type === q.type &&
    r.name === q.name.toLowerCase().replace(/\.$/, '')
  );
}

function overUdp(server: DnsServer, query: DnsPacket, timeoutMs: number): Promise<DnsResponse> {
  const socket = dgram.createSocket(net.isIPv6(server.host) ? 'udp6' : 'udp4');
  return new Promise<DnsResponse>((resolve, reject) => {
    const timer = setTimeout(() => finish(new Error(`timeout after ${timeoutMs} ms`)), timeoutMs);
    const finish = (err: Error | undefined, response?: DnsResponse) => {
      clearTimeout(timer);
      socket.close();
      if (err) reject(err);
      else resolve(response as DnsResponse);
    };
    socket.on('error', (err) => finish(err));
    socket.on('message', (message, rinfo) => {
      if (rinfo.port !== server.port || rinfo.address !== server.host) return;
      let response: DnsResponse;
      try {
        response = parseResponse(message);
      } catch {
        return;
      }
      if (answersQuery(query, response)) finish(undefined, response);
    });
    socket.send(query.toBuffer(), server.port, server.host, (err) => {
      if (err) finish(err);
    });
  });
}

/**
 * RFC 1035 4.2.2 / RFC 7766: each message preceded by its two-byte length. The chunks are joined
 * once the whole message is there, not on every chunk (quadratic in the number of chunks).
 */
function overTcp(server: DnsServer, query: DnsPacket, timeoutMs: number): Promise<DnsResponse> {
  const socket = net.connect({ host: server.host, port: server.port });
  return new Promise<DnsResponse>((resolve, reject) => {
    const chunks: Buffer[] = [];
    let received = 0;
    let wanted: number | undefined;
    socket.setTimeout(timeoutMs, () => socket.destroy(new Error(`TCP timeout after ${timeoutMs} ms`)));
    socket.on('error', reject);
    socket.on('close', () => reject(new Error('TCP connection closed before a full answer')));
    socket.on('data', (chunk: Buffer) => {
      chunks.push(chunk);
      received += chunk.length;
      if (wanted === undefined && received >= TCP_LENGTH_PREFIX) wanted = TCP_LENGTH_PREFIX + Buffer.concat(chunks).readUInt16BE(0);
      if (wanted === undefined || received < wanted) return;
      socket.destroy();
      try {
        const response = parseResponse(Buffer.concat(chunks).subarray(TCP_LENGTH_PREFIX, wanted));
        if (answersQuery(query, response)) resolve(response);
        else reject(new Error('TCP answer does not match the query'));
      } catch (err) {
        reject(err as Error);
      }
    });
    const message = query.toBuffer();
    const length = Buffer.alloc(2);
    length.writeUInt16BE(message.length);
    socket.write(Buffer.concat([length, message]));
  });
}
