/**
 * Parsers of DNS answers and of the text recipient and sending domains publish, each on its
 * generated worst case at the largest size it can receive (issue 29, item 4).
 *
 * Sizes: a DNS message is at most 65,535 bytes (RFC 1035 4.2.2, the TCP length prefix; c-ares and
 * src/dane/dns-message.ts accept that much), so one TXT record's joined text stays under DNS_TEXT, and a TXT RRset
 * holds at most about MAX_RECORDS records (13 bytes each: a 2-byte name pointer, type, class,
 * TTL, rdlength and one length octet). MTA-STS policies are capped at MAX_POLICY_BYTES by the
 * fetcher (src/mta-sts/fetcher.ts). A TLSA answer is read by src/dane/dns-message.ts and
 * matched against the certificates of every TLS session with a DANE host (src/dane/match.ts).
 */
import { Buffer } from 'node:buffer';
import { describe, expect, it } from 'vitest';
import { isDmarcRecord, publishedDmarc } from '../../src/domain/dmarc-record.js';
import { dkimRecordMatches, parseTagList } from '../../src/domain/dkim-record.js';
import { spfAuthorizes } from '../../src/domain/return-path.js';
import { matchCertificate } from '../../src/dane/match.js';
import { parseResponse } from '../../src/dane/dns-message.js';
import { parseTlsaRdata, isUsable, type TlsaRecord } from '../../src/dane/tlsa.js';
import { joinCharacterStrings } from '../../src/dns/resolver.js';
import { MAX_POLICY_BYTES, parsePolicy } from '../../src/mta-sts/policy.js';
import { MAX_RECORD_LENGTH, stsRecordId } from '../../src/mta-sts/txt.js';
import { trimBlanks } from '../../src/domain/white-space.js';
import { mailtoRecipient } from '../../src/tls-rpt/mailto.js';
import { parseTlsRptRecords } from '../../src/tls-rpt/txt.js';
import { DANE_MX, daneCerts } from '../support/dane-certs.js';
import { repeatTo, withinBudget } from '../support/worst-case.js';

/** The joined text of one TXT record can come close to this, never above (see the file comment). */
const DNS_TEXT = 65_000;
/** Records of 13 bytes each in one 64 KiB message. */
const MAX_RECORDS = 5_000;
const spaces = (n: number): string => ' '.repeat(n);

describe('MTA-STS TXT record (RFC 8461 3.1)', () => {
  it.each([
    // Issue 29: the old trim (/^[ \t]+|[ \t]+$/g) took seconds on a run of WSP between two characters.
    ['a field of spaces between two characters', `v=STSv1; id=abc; a${spaces(DNS_TEXT)}b`],
    ['a field of spaces inside the record', `v=STSv1;${spaces(DNS_TEXT)}x; id=abc`],
    ['a field of tabs before the id', `v=STSv1; id=abc;${'\t'.repeat(DNS_TEXT)}x=1`],
    ['spaces before the version\'s ";"', `v=STSv1${spaces(DNS_TEXT)};id=abc`],
    ['a field of spaces at the end', `v=STSv1; id=abc;${spaces(DNS_TEXT)}`],
    ['tens of thousands of fields', `v=STSv1;${repeatTo('a=b;', DNS_TEXT)}id=abc`],
    // The longest record that is parsed at all (longer ones are no record, unread).
    ['fields of spaces at the length cap', `v=STSv1; id=abc;${repeatTo(' x=1 ;', MAX_RECORD_LENGTH - 16)}`],
  ])('%s', (what, record) => {
    withinBudget(`stsRecordId: ${what}`, () => stsRecordId([record]));
  });

  it('thousands of STSv1 records', () => {
    const records = Array.from({ length: MAX_RECORDS }, (_, i) => `v=STSv1; id=a${i}`);
    expect(withinBudget('stsRecordId: 5,000 records', () => stsRecordId(records))).toBeNull();
  });
});

describe('WSP trimming of the MTA-STS texts', () => {
  it.each([
    ['spaces between two characters', `a${spaces(DNS_TEXT)}b`],
    ['tabs and spaces around a character', `${repeatTo(' \t', DNS_TEXT)}a${repeatTo('\t ', DNS_TEXT)}`],
  ])('%s', (what, text) => {
    withinBudget(`trimBlanks: ${what}`, () => trimBlanks(text));
  });
});

describe('MTA-STS policy (RFC 8461 3.2), at the fetcher\'s cap', () => {
  const head = 'version: STSv1\nmode: enforce\nmax_age: 86400\n';
  it.each([
    ['an mx of spaces between two characters', `${head}mx: a${repeatTo(' ', MAX_POLICY_BYTES - head.length - 10)}b\n`],
    ['a mode of tabs between two characters', `version: STSv1\nmode: e${repeatTo('\t', MAX_POLICY_BYTES - 40)}e\n`],
    ['a value of spaces', `${head}mx: ${repeatTo(' ', MAX_POLICY_BYTES - head.length - 10)}x\n`],
    ['a key of spaces', `${head}${repeatTo(' ', MAX_POLICY_BYTES - head.length - 10)}mx: a.b\n`],
    ['a line of tabs and spaces without a colon', `${head}${repeatTo(' \t', MAX_POLICY_BYTES - head.length)}`],
    ['thousands of mx lines', `${head}${repeatTo('mx: a.shop-mail.net\n', MAX_POLICY_BYTES - head.length)}`],
    ['an mx of long labels that ends in an invalid character', `${head}mx: ${repeatTo(`${'a'.repeat(62)}.`, MAX_POLICY_BYTES - head.length - 10)}!\n`],
    ['an mx of one-letter labels that ends in an invalid character', `${head}mx: ${repeatTo('a-.', MAX_POLICY_BYTES - head.length - 10)}!\n`],
    ['empty lines', `${head}${repeatTo('\r\n', MAX_POLICY_BYTES - head.length)}`],
  ])('%s', (what, text) => {
    expect(text.length).toBeLessThanOrEqual(MAX_POLICY_BYTES);
    withinBudget(`parsePolicy: ${what}`, () => parsePolicy(text));
  });
});

describe('TLS-RPT record (RFC 8460 3) and its mailto: rua', () => {
  it.each([
    ['a field of spaces', `v=TLSRPTv1;${spaces(DNS_TEXT)}x;rua=mailto:a@b.example`],
    ['a rua of tens of thousands of URIs', `v=TLSRPTv1; rua=${repeatTo('mailto:a@b.c,', DNS_TEXT)}`],
    ['spaces before the version\'s ";"', `v=TLSRPTv1${spaces(DNS_TEXT)};rua=mailto:a@b.example`],
    ['spaces between rua and "="', `v=TLSRPTv1;rua${spaces(DNS_TEXT)}x`],
  ])('%s', (what, record) => {
    withinBudget(`parseTlsRptRecords: ${what}`, () => parseTlsRptRecords([record]));
  });

  it.each([
    ['a long address', `mailto:${'a'.repeat(DNS_TEXT)}@b.example`],
    ['a long query', `mailto:a@b.example?${'?'.repeat(DNS_TEXT)}`],
    ['percent-encodings', `mailto:${repeatTo('%41', DNS_TEXT)}@b.example`],
    ['spaces', `mailto:a${spaces(DNS_TEXT)}@b.example`],
  ])('mailto: %s', (what, uri) => {
    withinBudget(`mailtoRecipient: ${what}`, () => mailtoRecipient(uri));
  });
});

describe('SPF, DKIM and DMARC records in domain verification', () => {
  it.each([
    ['a long a: term that ends in "/"', `v=spf1 a:${'x'.repeat(DNS_TEXT)}/`],
    ['an a: term of CIDR lengths', `v=spf1 +a:h.example${repeatTo('/1', DNS_TEXT)}x`],
    ['white space between terms', `v=spf1${repeatTo(' \t', DNS_TEXT)}mx`],
    ['tens of thousands of terms', `v=spf1 ${repeatTo('a:x ', DNS_TEXT)}`],
  ])('SPF: %s', (what, record) => {
    withinBudget(`spfAuthorizes: ${what}`, () => spfAuthorizes([record], 'mx.postrider.example'));
  });

  it('SPF: thousands of records', () => {
    const records = Array.from({ length: MAX_RECORDS }, () => 'v=spf1 mx');
    expect(withinBudget('spfAuthorizes: 5,000 records', () => spfAuthorizes(records, 'mx.postrider.example'))).toBe(false);
  });

  it.each([
    ['spaces after v', `v${spaces(DNS_TEXT)}x`],
    ['spaces after DMARC1', `v=DMARC1${spaces(DNS_TEXT)}x`],
    ['spaces before v', `${spaces(DNS_TEXT)}v=DMARC1`],
  ])('DMARC: %s', (what, record) => {
    withinBudget(`publishedDmarc: ${what}`, () => publishedDmarc([record, record.slice(1)]));
    withinBudget(`isDmarcRecord: ${what}`, () => isDmarcRecord(record));
  });

  it.each([
    ['a key of spaces', `v=DKIM1; k=rsa; p=${repeatTo('A ', DNS_TEXT)}`],
    ['a tag name of letters that ends in "-"', `${'a'.repeat(DNS_TEXT)}-=1`],
    ['tens of thousands of tags', `${repeatTo('a=1;', DNS_TEXT)}`],
    ['semicolons and spaces', `p=A;${repeatTo(' ;', DNS_TEXT)}`],
  ])('DKIM: %s', (what, record) => {
    withinBudget(`parseTagList: ${what}`, () => parseTagList(record));
    withinBudget(`dkimRecordMatches: ${what}`, () => dkimRecordMatches(record, 'v=DKIM1; k=rsa; p=AAAA'));
  });
});

describe('DNS answers', () => {
  it.each([
    ['ASCII', repeatTo('a', 255)],
    ['UTF-8 (joined, then decoded)', repeatTo('\u00c3\u00a9', 255)],
    ['bytes that are not UTF-8', repeatTo('\u00ff', 255)],
  ])('a TXT record of 255-byte character-strings: %s', (what, chunk) => {
    const chunks = Array.from({ length: Math.ceil(DNS_TEXT / 255) }, () => chunk);
    withinBudget(`joinCharacterStrings: ${what}`, () => joinCharacterStrings(chunks));
  });

  it('a 64 KiB answer of the smallest TLSA records', () => {
    const packet = tlsaResponse(4_000, Buffer.from([3, 1, 1, 0]));
    expect(packet.length).toBeLessThanOrEqual(65_535);
    const answers = withinBudget('parseResponse: 4,000 TLSA records', () => parseResponse(packet).answers);
    expect(answers).toHaveLength(4_000);
  });

  it('a 64 KiB answer of TLSA records, each rdata read', () => {
    const packet = tlsaResponse(1_390);
    expect(packet.length).toBeLessThanOrEqual(65_535);
    const records = withinBudget('parseResponse + parseTlsaRdata: 1,390 TLSA records', () =>
      parseResponse(packet)
        .answers.map((a) => parseTlsaRdata(a.data))
        .filter((r) => r !== undefined && isUsable(r)),
    );
    expect(records).toHaveLength(1_390);
  });

  it('thousands of records whose owner names each take the most compression pointers a name may', () => {
    // The owner's own pointer, then 126 in the chain: 127, as many as a name has labels at most.
    const packet = tlsaResponse(4_000, Buffer.from([3, 1, 1, 0]), { ownerHops: 126 });
    expect(packet.length).toBeLessThanOrEqual(65_535);
    const answers = withinBudget('parseResponse: 4,000 owners of 127 pointers each', () => parseResponse(packet).answers);
    expect(answers).toHaveLength(4_001);
  });
});

describe('DANE matching on a TLSA answer of a signed zone', () => {
  const { leaf, ca, otherCa } = daneCerts();
  const noise = (count: number): TlsaRecord[] =>
    Array.from({ length: count }, (_, i) => ({ usage: 2 + (i % 2), selector: i % 3 === 0 ? 0 : 1, matchingType: 1, data: Buffer.alloc(32, i) }));

  it('1,390 usable records, none of which matches the chain', () => {
    const result = withinBudget('matchCertificate: 1,390 digests', () => matchCertificate([leaf, ca, otherCa], noise(1_390), [DANE_MX]));
    expect(result.ok).toBe(false);
  });

  it('hundreds of "2 1 0" keys, none of which signs the chain', () => {
    // An EC key's SPKI is 91 bytes, so about 600 such records fit in 64 KiB.
    const spki = otherCa.publicKey.export({ type: 'spki', format: 'der' });
    const keys = Array.from({ length: 600 }, () => ({ usage: 2, selector: 1, matchingType: 0, data: spki }));
    const result = withinBudget('matchCertificate: 600 bare trust anchors', () => matchCertificate([leaf, ca], keys, [DANE_MX]));
    expect(result.ok).toBe(false);
  });
});

/**
 * A DNS response (RFC 1035 4.1) to _25._tcp.mx.example TLSA with `count` records of `rdata`
 * ("3 1 1 <32 bytes>"), owned by the question's name; with `ownerHops`, a first record (type 0)
 * carries a chain of that many compression pointers, each to the one before, ending at the root
 * name, and every TLSA record's owner points at the chain's end.
 */
function tlsaResponse(count: number, rdata = Buffer.concat([Buffer.from([3, 1, 1]), Buffer.alloc(32, 0xab)]), o: { ownerHops?: number } = {}): Buffer {
  const records = count + (o.ownerHops ? 1 : 0);
  const header = Buffer.from([0x12, 0x34, 0x85, 0x00, 0, 1, records >> 8, records & 0xff, 0, 0, 0, 0]);
  const name = Buffer.concat([...['_25', '_tcp', 'mx', 'example'].map((l) => Buffer.concat([Buffer.from([l.length]), Buffer.from(l)])), Buffer.from([0])]);
  const question = Buffer.concat([name, Buffer.from([0, 52, 0, 1])]);
  let chain = Buffer.alloc(0);
  let owner = 12;
  if (o.ownerHops) {
    const start = header.length + question.length + 11; // after the chain record's root owner and fixed fields
    const links = [Buffer.from([0]), ...Array.from({ length: o.ownerHops }, (_, i) => pointerTo(i === 0 ? start : start + 1 + (i - 1) * 2))];
    const data = Buffer.concat(links);
    chain = Buffer.concat([Buffer.from([0, 0, 0, 0, 1, 0, 0, 0, 0, data.length >> 8, data.length & 0xff]), data]);
    owner = start + 1 + (o.ownerHops - 1) * 2;
  }
  const answer = Buffer.concat([pointerTo(owner), Buffer.from([0, 52, 0, 1, 0, 0, 1, 44, 0, rdata.length]), rdata]);
  return Buffer.concat([header, question, chain, ...Array.from({ length: count }, () => answer)]);
}

function pointerTo(offset: number): Buffer {
  return Buffer.from([0xc0 | (offset >> 8), offset & 0xff]);
}
