/**
 * An in-process authoritative DNS server for tests, built on dns2.
 *
 * Tests must never touch real DNS (the system resolver points off the machine and there is no
 * network), so every test that needs DNS starts one of these on 127.0.0.1 and hands
 * `address` ('127.0.0.1:PORT') to the code under test, e.g. through POSTRIDER_DNS_SERVERS.
 *
 * UDP and TCP listen on the SAME port. That is not cosmetic: node's resolver (c-ares) sends no
 * EDNS OPT record, so the server may only use 512-byte UDP answers (RFC 1035 §4.2.1); anything
 * bigger (a 600-byte TXT, a DKIM key) goes out with TC=1 and c-ares retries over TCP to the same
 * address and port (RFC 7766). dns2's createServer({udp, tcp}) would give each transport its
 * own random port when asked for port 0, so the two servers are created and bound here by hand.
 *
 * Behaviour, as a real authoritative server would answer:
 *  - unknown name                      → NXDOMAIN (rcode 3)
 *  - known name, no records of the type → NOERROR with an empty answer section (NODATA, RFC 2308 §2.2)
 *  - servfail(name)                    → SERVFAIL (rcode 2) for every type
 *  - a CNAME is returned for any type and followed inside this zone (RFC 1034 §3.6.2)
 *  - TXT values longer than 255 bytes are split into several character-strings
 *    (RFC 1035 §3.3.14; RFC 7208 §3.3), which the resolver must join again
 *  - MX with exchange '' or '.' is the null MX "0 ." of RFC 7505, encoded as the root name
 *  - TLSA values are written as in a zone file, "3 1 1 <hex>" (RFC 6698 2.2); dns2 has no TLSA
 *    codec, so the rdata goes out raw
 *  - signed(zone): answers for names at or under zone carry AD when the query set AD or DO,
 *    as a validating resolver's would (RFC 6840 5.7); there are no real signatures
 * Names are case-insensitive (RFC 4343) and stored without the trailing dot.
 */
import dgram from 'node:dgram';
import net from 'node:net';
import dns2 from 'dns2';
import { DnsResolver } from '../../src/dns/resolver.js';

const { Packet } = dns2;

export type TestRecordType = 'A' | 'AAAA' | 'MX' | 'TXT' | 'CNAME' | 'TLSA' | 'PTR';
export type TestRecordValue = string | { exchange: string; priority: number };

export interface TestDns {
  /** '127.0.0.1:PORT', usable as a server list entry. */
  address: string;
  port: number;
  /** Replace the records of one type at a name. MX values are {exchange, priority} or "10 mx.example". */
  set(name: string, type: TestRecordType, values: TestRecordValue[], ttl?: number): void;
  /** Remove one type at a name, or the whole name (it then answers NXDOMAIN). */
  remove(name: string, type?: TestRecordType): void;
  /** Remove all records and SERVFAIL markers (the query log is kept; truncate it yourself). */
  clear(): void;
  /** Every question received, in order, over UDP and TCP (a TC retry shows up twice). */
  queries: { name: string; type: string }[];
  /** Make a name answer SERVFAIL for every type until remove()/clear(). */
  servfail(name: string): void;
  /** Answers for names at or under zone get AD (when the query asked with AD or DO). */
  signed(zone: string): void;
  /** Holds the answers to questions for `name` (any type) until the returned function is called. */
  hold(name: string): () => void;
  close(): Promise<void>;
}

interface RRSet {
  ttl: number;
  values: TestRecordValue[];
}

type DnsPacket = InstanceType<typeof Packet>;
type DnsResource = ReturnType<typeof Packet.Resource.parse>;

/**
 * RFC 1035 §4.1.1 response codes. dns2 has Packet.RCODE at runtime but its type declarations
 * omit it, so we spell out the few we need.
 */
const RCODE = { FORMERR: 1, SERVFAIL: 2, NXDOMAIN: 3 } as const;

const DEFAULT_TTL = 300;
/** RFC 1035 §3.3: a <character-string> is a length octet followed by at most 255 octets. */
const MAX_CHARACTER_STRING = 255;
/** Guard against CNAME loops in test data (real resolvers use similar small limits). */
const MAX_CNAME_CHAIN = 8;

/** RFC 6698 7.1; not in dns2's table. */
const TLSA_TYPE = 52;
const TYPE_NAMES = new Map<number, string>([...Object.entries(Packet.TYPE).map(([k, v]) => [v as number, k] as const), [TLSA_TYPE, 'TLSA']]);

function tlsaRdata(value: string): Buffer {
  const m = /^\s*(\d+)\s+(\d+)\s+(\d+)\s+([0-9a-fA-F]+)\s*$/.exec(value);
  if (!m || m[4].length % 2 !== 0) throw new Error(`test DNS: TLSA value "${value}" is not "<usage> <selector> <mtype> <hex>"`);
  return Buffer.concat([Buffer.from([Number(m[1]), Number(m[2]), Number(m[3])]), Buffer.from(m[4], 'hex')]);
}

function normalizeName(name: string): string {
  const lower = name.trim().toLowerCase();
  return lower.endsWith('.') ? lower.slice(0, -1) : lower;
}

/** Split a TXT value at 255-byte boundaries (bytes, not characters: the limit is in octets). */
function splitCharacterStrings(value: string): Buffer[] {
  const bytes = Buffer.from(value, 'utf8');
  if (bytes.length === 0) return [bytes];
  const chunks: Buffer[] = [];
  for (let i = 0; i < bytes.length; i += MAX_CHARACTER_STRING) {
    chunks.push(bytes.subarray(i, i + MAX_CHARACTER_STRING));
  }
  return chunks;
}

function parseMx(value: TestRecordValue): { exchange: string; priority: number } {
  if (typeof value !== 'string') return value;
  const m = /^\s*(\d+)\s+(\S+)\s*$/.exec(value);
  if (!m) throw new Error(`test DNS: MX value "${value}" is not "<priority> <exchange>"`);
  return { priority: Number(m[1]), exchange: m[2] };
}

/** Validate at set() time so a typo fails the test that made it, not some later query. */
function validate(type: TestRecordType, values: TestRecordValue[]): void {
  for (const v of values) {
    if (type === 'MX') {
      const { priority } = parseMx(v);
      if (!Number.isInteger(priority) || priority < 0 || priority > 0xffff) {
        throw new Error(`test DNS: MX priority ${priority} is not a 16-bit unsigned integer`);
      }
      continue;
    }
    if (typeof v !== 'string') throw new Error(`test DNS: ${type} values must be strings`);
    if (type === 'A' && !net.isIPv4(v)) throw new Error(`test DNS: "${v}" is not an IPv4 address`);
    if (type === 'AAAA' && !net.isIPv6(v)) throw new Error(`test DNS: "${v}" is not an IPv6 address`);
    if (type === 'TLSA') tlsaRdata(v);
  }
  if (type === 'CNAME' && values.length !== 1) {
    // RFC 2181 §10.1: a name has at most one CNAME.
    throw new Error('test DNS: a CNAME set must have exactly one value');
  }
}

/**
 * dns2's AAAA encoder expands "::" itself but does not understand an embedded IPv4 tail
 * (::ffff:192.0.2.1); the WHATWG URL parser rewrites such addresses to pure hex groups.
 */
function ipv6ForDns2(address: string): string {
  return new URL(`http://[${address}]/`).hostname.slice(1, -1);
}

function buildRecords(owner: string, type: TestRecordType, set: RRSet): DnsResource[] {
  const base = { name: owner, class: Packet.CLASS.IN, ttl: set.ttl };
  return set.values.map((value) => {
    switch (type) {
      case 'A':
        return new Packet.Resource({ ...base, type: Packet.TYPE.A, address: value as string });
      case 'AAAA':
        return new Packet.Resource({ ...base, type: Packet.TYPE.AAAA, address: ipv6ForDns2(value as string) });
      case 'CNAME':
        return new Packet.Resource({ ...base, type: Packet.TYPE.CNAME, domain: normalizeName(value as string) });
      // Reverse names: 2.0.0.127.in-addr.arpa (RFC 1035 3.5), <nibbles>.ip6.arpa (RFC 3596 2.5).
      case 'PTR':
        return new Packet.Resource({ ...base, type: Packet.TYPE.PTR, domain: normalizeName(value as string) });
      case 'MX': {
        const { exchange, priority } = parseMx(value);
        // dns2's name encoder drops empty labels, so both '' and '.' come out as the single
        // zero octet of the root name: the null MX of RFC 7505 §3.
        return new Packet.Resource({ ...base, type: Packet.TYPE.MX, priority, exchange: exchange === '.' ? '' : exchange });
      }
      case 'TXT':
        // dns2's TXT encoder writes each array element as one character-string and accepts
        // Buffers, which lets us split on byte (not UTF-16 unit) boundaries.
        return new Packet.Resource({ ...base, type: Packet.TYPE.TXT, data: splitCharacterStrings(value as string) as unknown as string[] });
      case 'TLSA':
        // Unknown to dns2's encoder, which then writes `data` as the raw rdata.
        return new Packet.Resource({ ...base, type: TLSA_TYPE, data: tlsaRdata(value as string) as unknown as string });
    }
  });
}

export async function startDnsServer(): Promise<TestDns> {
  const zone = new Map<string, Map<TestRecordType, RRSet>>();
  const failing = new Set<string>();
  const signedZones = new Set<string>();
  const queries: { name: string; type: string }[] = [];

  const answer = (request: DnsPacket): DnsPacket => {
    const response = Packet.createResponseFromRequest(request);
    response.header.aa = 1;
    response.header.ra = 1;
    if (request.questions.length !== 1) {
      // RFC 9619: exactly one question per query.
      response.header.rcode = RCODE.FORMERR;
      return response;
    }
    const question = request.questions[0];
    const typeName = TYPE_NAMES.get(question.type) ?? String(question.type);
    let owner = normalizeName(question.name);
    queries.push({ name: owner, type: typeName });
    const asked = (request.header as { ad?: number }).ad === 1 || request.additionals.some((r) => r.type === Packet.TYPE.EDNS && (r as { doFlag?: boolean }).doFlag);
    const isSigned = (name: string) => [...signedZones].some((zone) => name === zone || name.endsWith(`.${zone}`));
    (response.header as { ad?: number }).ad = asked && isSigned(owner) ? 1 : 0;

    for (let hop = 0; hop <= MAX_CNAME_CHAIN; hop++) {
      if (failing.has(owner)) {
        response.header.rcode = RCODE.SERVFAIL;
        return response;
      }
      const sets = zone.get(owner);
      if (!sets) {
        // RFC 6604: after a CNAME the rcode describes the last name in the chain.
        response.header.rcode = RCODE.NXDOMAIN;
        return response;
      }
      const wanted = sets.get(typeName as TestRecordType);
      if (wanted) {
        response.answers.push(...buildRecords(owner, typeName as TestRecordType, wanted));
        return response;
      }
      const alias = sets.get('CNAME');
      if (!alias) return response; // NODATA: NOERROR, no answers
      response.answers.push(...buildRecords(owner, 'CNAME', alias));
      owner = normalizeName(alias.values[0] as string);
      // RFC 4035 3.2.3: AD only when every RRset in the answer is secure.
      if (!isSigned(owner)) (response.header as { ad?: number }).ad = 0;
    }
    response.header.rcode = RCODE.SERVFAIL; // CNAME loop
    return response;
  };

  /** Names whose answers wait (hold()), with the replies waiting. */
  const holds = new Map<string, Array<() => void>>();
  const handle = (request: DnsPacket, send: (response: DnsPacket) => Promise<Buffer>): void => {
    let response: DnsPacket;
    try {
      response = answer(request);
    } catch {
      response = Packet.createResponseFromRequest(request);
      response.header.rcode = RCODE.SERVFAIL;
    }
    // A send failure (client went away) is not the test's business.
    const reply = () => void send(response).catch(() => undefined);
    const held = request.questions.length > 0 ? holds.get(normalizeName(request.questions[0].name)) : undefined;
    if (held) held.push(reply);
    else reply();
  };

  const { udp, tcp, port } = await listenOnSamePort(handle);

  // c-ares keeps TCP connections open for reuse; close() must not wait for them.
  const sockets = new Set<net.Socket>();
  tcp.on('connection', (socket: net.Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });

  let closed: Promise<void> | undefined;

  return {
    address: `127.0.0.1:${port}`,
    port,
    queries,
    set(name, type, values, ttl = DEFAULT_TTL) {
      validate(type, values);
      const owner = normalizeName(name);
      let sets = zone.get(owner);
      if (!sets) zone.set(owner, (sets = new Map()));
      sets.set(type, { ttl, values: [...values] });
    },
    remove(name, type) {
      const owner = normalizeName(name);
      if (type === undefined) {
        zone.delete(owner);
        failing.delete(owner);
        return;
      }
      zone.get(owner)?.delete(type);
    },
    clear() {
      zone.clear();
      failing.clear();
      signedZones.clear();
    },
    servfail(name) {
      failing.add(normalizeName(name));
    },
    signed(zone) {
      signedZones.add(normalizeName(zone));
    },
    hold(name) {
      const owner = normalizeName(name);
      const waiting: Array<() => void> = [];
      holds.set(owner, waiting);
      return () => {
        if (holds.get(owner) === waiting) holds.delete(owner);
        for (const reply of waiting.splice(0)) reply();
      };
    },
    close() {
      closed ??= (async () => {
        for (const socket of sockets) socket.destroy();
        await Promise.all([
          new Promise<void>((resolve) => udp.close(() => resolve())),
          new Promise<void>((resolve) => tcp.close(() => resolve())),
        ]);
      })();
      return closed;
    },
  };
}

/**
 * A started DnsResolver that asks `dns` alone, gives up quickly (500 ms, one try) and keeps no
 * cache, so every lookup sees the records as the test last set them (`cache: true`: the default
 * cache, as the daemon's delivery resolver has). The test stop()s it.
 */
export function testResolver(dns: Pick<TestDns, 'address'>, o: { cache?: boolean } = {}): DnsResolver {
  const resolver = new DnsResolver({ servers: [dns.address], timeoutMs: 500, tries: 1, ...(o.cache ? {} : { cacheMaxEntries: 0 }) });
  resolver.start();
  return resolver;
}

type Handler = (request: DnsPacket, send: (response: DnsPacket) => Promise<Buffer>) => void;

/** Bind UDP on a random port, then TCP on the same one; retry if TCP finds it taken. */
async function listenOnSamePort(handle: Handler): Promise<{ udp: dgram.Socket; tcp: net.Server; port: number }> {
  let lastError: unknown;
  for (let attempt = 0; attempt < 20; attempt++) {
    const udp = dns2.createUDPServer({ type: 'udp4' });
    udp.on('request', handle);
    await udp.listen(0, '127.0.0.1');
    const port = udp.address().port;
    const tcp = dns2.createTCPServer();
    tcp.on('request', handle);
    try {
      await new Promise<void>((resolve, reject) => {
        tcp.once('error', reject);
        tcp.listen(port, '127.0.0.1', () => {
          tcp.off('error', reject);
          resolve();
        });
      });
      return { udp, tcp, port };
    } catch (err) {
      lastError = err;
      await new Promise<void>((resolve) => udp.close(() => resolve()));
    }
  }
  throw new Error(`test DNS: could not bind UDP and TCP on one port: ${String(lastError)}`);
}
