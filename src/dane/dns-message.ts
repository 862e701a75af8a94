/**
 * Reads a DNS response (RFC 1035 4.1) for secure-dns.ts: the header, the first question and the
 * answer section, each record's rdata kept raw (TLSA, RFC 6698 2.1) and a CNAME's or MX's target read.
 *
 * Why not dns2's Packet.parse: it reads every field bit by bit through arrays, about 100 µs per
 * record, and a response can hold 4,000 records in 64 KiB (RFC 1035 4.2.2): 385 ms on the main
 * thread for one answer whose size the queried domain chooses. This reads with Buffer offsets,
 * once, and skips the authority and additional sections, which DANE does not use.
 *
 * Malformed input throws: out-of-bounds reads, labels over 63 octets, names over 255 (RFC 1035
 * 2.3.4), compression pointers that do not point backwards (which ends pointer loops) and names
 * of more pointers than labels.
 */
import { Buffer } from 'node:buffer';

export interface DnsResource {
  name: string;
  type: number;
  class: number;
  /** Seconds; a TTL with the high bit set counts as 2^31 - 1 (RFC 2181 8). */
  ttl: number;
  /** The raw rdata. */
  data: Buffer;
  /** A CNAME's target (type 5) or an MX's exchange (type 15, RFC 1035 3.3.9), lower case, without the root dot. */
  domain?: string;
}

export interface DnsResponse {
  id: number;
  /** QR: 1 for a response. */
  qr: number;
  /** TC: truncated, ask again over TCP (RFC 7766). */
  tc: boolean;
  /** AD: the validating resolver authenticated the data (RFC 4035 3.2.3). */
  ad: boolean;
  rcode: number;
  question?: { name: string; type: number };
  answers: DnsResource[];
}

const TYPE_CNAME = 5;
const TYPE_MX = 15;
const MAX_LABEL = 63;
const MAX_NAME = 255;
/** A name of 255 octets has at most 127 labels, each of which a pointer could stand for. */
const MAX_POINTER_HOPS = 127;

export function parseResponse(message: Buffer): DnsResponse {
  const r = new Reader(message);
  const id = r.u16();
  const flags = r.u16();
  const qdcount = r.u16();
  const ancount = r.u16();
  r.skip(4); // NSCOUNT, ARCOUNT: not read
  let question: DnsResponse['question'];
  for (let i = 0; i < qdcount; i++) {
    const q = { name: r.name(), type: r.u16() };
    r.skip(2); // QCLASS
    question ??= q;
  }
  const answers: DnsResource[] = [];
  for (let i = 0; i < ancount; i++) answers.push(resource(r));
  return { id, qr: flags >> 15, tc: (flags & 0x0200) !== 0, ad: (flags & 0x0020) !== 0, rcode: flags & 0x000f, question, answers };
}

function resource(r: Reader): DnsResource {
  const name = r.name();
  const type = r.u16();
  const klass = r.u16();
  const ttl = Math.min(r.u32(), 0x7fffffff);
  const length = r.u16();
  const start = r.offset;
  const data = r.bytes(length);
  if (type !== TYPE_CNAME && type !== TYPE_MX) return { name, type, class: klass, ttl, data };
  // An MX's exchange follows its 16-bit preference.
  const target = new Reader(r.message, type === TYPE_MX ? start + 2 : start);
  return { name, type, class: klass, ttl, data, domain: target.name() };
}

class Reader {
  constructor(
    readonly message: Buffer,
    public offset = 0,
  ) {}

  u16(): number {
    this.need(2);
    const v = this.message.readUInt16BE(this.offset);
    this.offset += 2;
    return v;
  }

  u32(): number {
    this.need(4);
    const v = this.message.readUInt32BE(this.offset);
    this.offset += 4;
    return v;
  }

  skip(n: number): void {
    this.need(n);
    this.offset += n;
  }

  bytes(n: number): Buffer {
    this.need(n);
    const b = Buffer.from(this.message.subarray(this.offset, this.offset + n));
    this.offset += n;
    return b;
  }

  /** A domain name (RFC 1035 3.1, 4.1.4), lower case, without the root dot. */
  name(): string {
    const labels: string[] = [];
    let at = this.offset;
    let end: number | undefined; // where reading goes on after the first pointer
    let octets = 1;
    let hops = 0;
    for (;;) {
      if (at >= this.message.length) throw new Error('DNS message: name runs past the end');
      const len = this.message[at];
      if (len === 0) break;
      if ((len & 0xc0) === 0xc0) {
        if (at + 1 >= this.message.length) throw new Error('DNS message: name runs past the end');
        const target = ((len & 0x3f) << 8) | this.message[at + 1];
        // To a prior occurrence (RFC 1035 4.1.4), and no more hops than a name has labels: a
        // chain of thousands of pointers would otherwise be walked again for every record.
        if (target >= at) throw new Error('DNS message: compression pointer does not point backwards');
        if (++hops > MAX_POINTER_HOPS) throw new Error('DNS message: too many compression pointers in one name');
        end ??= at + 2;
        at = target;
        continue;
      }
      if (len > MAX_LABEL) throw new Error('DNS message: label longer than 63 octets');
      octets += len + 1;
      if (octets > MAX_NAME) throw new Error('DNS message: name longer than 255 octets');
      if (at + 1 + len > this.message.length) throw new Error('DNS message: name runs past the end');
      labels.push(this.message.toString('latin1', at + 1, at + 1 + len).toLowerCase());
      at += 1 + len;
    }
    this.offset = end ?? at + 1;
    return labels.join('.');
  }

  private need(n: number): void {
    if (this.offset + n > this.message.length) throw new Error('DNS message: truncated');
  }
}
