/**
 * The DNS response reader of src/dane (RFC 1035 4.1): what it reads of responses that dns2's
 * encoder (the test DNS server's) writes, and the malformed ones it refuses.
 */
import { Buffer } from 'node:buffer';
import dns2 from 'dns2';
import { describe, expect, it } from 'vitest';
import { parseResponse } from '../../src/dane/dns-message.js';

const { Packet } = dns2;

/** A response to `name` `type`, with AD, as a validating resolver answers (RFC 4035 3.2.3). */
function response(name: string, type: number, answers: object[]): Buffer {
  const p = new Packet();
  p.header.id = 4242;
  p.header.qr = 1;
  p.header.rcode = 3;
  (p.header as { ad?: number }).ad = 1;
  p.questions.push({ name, type, class: Packet.CLASS.IN } as InstanceType<typeof Packet>['questions'][number]);
  for (const a of answers) p.answers.push(new Packet.Resource({ class: Packet.CLASS.IN, ttl: 300, ...a }));
  return p.toBuffer();
}

const HEADER = [0x12, 0x34, 0x81, 0x20, 0, 1, 0, 1, 0, 0, 0, 0];
/** _25._tcp.mx.example, as written in a question at offset 12. */
const QNAME = [3, 0x5f, 0x32, 0x35, 4, 0x5f, 0x74, 0x63, 0x70, 2, 0x6d, 0x78, 7, 0x65, 0x78, 0x61, 0x6d, 0x70, 0x6c, 0x65, 0];

/** Where the question ends and the first answer begins. */
const ANSWERS = HEADER.length + QNAME.length + 4;

function withAnswerOwner(owner: number[]): Buffer {
  return Buffer.from([...HEADER, ...QNAME, 0, 52, 0, 1, ...owner, 0, 52, 0, 1, 0, 0, 0, 60, 0, 4, 3, 1, 1, 0xab]);
}

describe('parseResponse', () => {
  it('reads the header flags, the question and each answer, following compression pointers', () => {
    const message = response('Mail.Example.', Packet.TYPE.A, [
      { name: 'mail.example', type: Packet.TYPE.CNAME, domain: 'MX1.example' },
      { name: 'mx1.example', type: Packet.TYPE.A, address: '192.0.2.7', ttl: 0xffffffff },
    ]);
    const r = parseResponse(message);
    expect(r).toMatchObject({ id: 4242, qr: 1, tc: false, ad: true, rcode: 3, question: { name: 'mail.example', type: Packet.TYPE.A } });
    expect(r.answers).toMatchObject([
      { name: 'mail.example', type: Packet.TYPE.CNAME, class: 1, ttl: 300, domain: 'mx1.example' },
      // RFC 2181 8: a TTL with the high bit set is read as 2^31 - 1.
      { name: 'mx1.example', type: Packet.TYPE.A, ttl: 0x7fffffff, data: Buffer.from([192, 0, 2, 7]) },
    ]);
  });

  it('keeps the rdata of a TLSA record raw, and reads TC', () => {
    const r = parseResponse(withAnswerOwner([0xc0, 12]));
    expect(r).toMatchObject({ id: 0x1234, qr: 1, tc: false, ad: true, rcode: 0 });
    expect(r.answers).toEqual([{ name: '_25._tcp.mx.example', type: 52, class: 1, ttl: 60, data: Buffer.from([3, 1, 1, 0xab]) }]);
    const truncated = Buffer.from(withAnswerOwner([0xc0, 12]));
    truncated[2] |= 0x02;
    expect(parseResponse(truncated).tc).toBe(true);
  });

  it("reads an MX's exchange after its preference, following a pointer into the question", () => {
    // example MX: 10 mx.<pointer to the question's "example">.
    const question = [7, 0x65, 0x78, 0x61, 0x6d, 0x70, 0x6c, 0x65, 0, 0, 15, 0, 1];
    const answer = [0xc0, 12, 0, 15, 0, 1, 0, 0, 0, 60, 0, 7, 0, 10, 2, 0x4d, 0x58, 0xc0, 12];
    const r = parseResponse(Buffer.from([...HEADER, ...question, ...answer]));
    expect(r.answers).toMatchObject([{ name: 'example', type: 15, domain: 'mx.example' }]);
  });

  it.each([
    ['a pointer to itself', [0xc0, ANSWERS], /does not point backwards/],
    ['a pointer forwards', [0xc0, 60], /does not point backwards/],
    ['a label of 64 octets', [64, ...Buffer.alloc(64, 0x61), 0], /label longer than 63/],
    ['a name of more than 255 octets', [...Array.from({ length: 5 }, () => [63, ...Buffer.alloc(63, 0x61)]).flat(), 0], /name longer than 255/],
    ['a name that runs past the end', [5, 0x61], /past the end|truncated/],
  ])('refuses %s', (_what, owner, error) => {
    expect(() => parseResponse(withAnswerOwner(owner))).toThrow(error);
  });

  it('refuses a record cut short, and a name of more compression pointers than a name has labels', () => {
    expect(() => parseResponse(withAnswerOwner([0xc0, 12]).subarray(0, 50))).toThrow(/truncated/);
    // 128 pointers, each to the one before, after the question; the owner points at the last.
    const root = ANSWERS + 11; // the chain record's rdata: after its root owner and fixed fields
    const pointer = (to: number) => [0xc0 | (to >> 8), to & 0xff];
    const links = [0, ...Array.from({ length: 128 }, (_, i) => pointer(i === 0 ? root : root + 1 + (i - 1) * 2)).flat()];
    const chain = [0, 0, 0, 0, 1, 0, 0, 0, 0, links.length >> 8, links.length & 0xff, ...links];
    const header = [...HEADER.slice(0, 6), 0, 2, 0, 0, 0, 0];
    const last = root + 1 + 127 * 2;
    const owner = (hops: number) => last - (128 - hops) * 2; // a pointer with `hops` links behind it
    const message = (at: number) => Buffer.from([...header, ...QNAME, 0, 52, 0, 1, ...chain, ...pointer(at), 0, 52, 0, 1, 0, 0, 0, 60, 0, 1, 3]);
    // The owner's own pointer and 126 links: 127 hops, allowed; one more is not.
    expect(parseResponse(message(owner(126))).answers[1]).toMatchObject({ name: '', type: 52 });
    expect(() => parseResponse(message(owner(127)))).toThrow(/too many compression pointers/);
  });
});
