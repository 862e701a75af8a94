import crypto from 'node:crypto';
import { dkimBody } from 'mailauth/lib/dkim/body/index.js';
import { dkimSign } from 'mailauth/lib/dkim/sign.js';
import { afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { composeMessage, type ComposeInput } from '../../src/workers/compose.js';
import { DkimKeyCache } from '../../src/workers/dkim-keys.js';
import { dkimSignature, hashForSigning } from '../../src/workers/dkim-signature.js';
import { DkimSigner, generateDkimKey, OVERSIGNED, OVERSIGNED_WHEN_PRESENT, SIGNED_HEADERS, type DkimAlgorithm, type GeneratedKey } from '../../src/workers/dkim.js';

// Our signer builds the DKIM-Signature field from mailauth's parts with a parsed key; it must
// write exactly what mailauth's own dkimSign writes for the same message, key and time. mailauth
// cannot over-sign (RFC 6376 8.15), so the comparison is of dkimSignature without over-signing;
// DkimSigner's over-signed h= is checked against it separately.

/** dkimSignature as DkimSigner calls it, without over-signing (or with the given lists), prepended. */
async function signed(raw: Buffer, key: GeneratedKey, selector: string, oversign: { oversign?: readonly string[]; oversignPresent?: readonly string[] } = {}): Promise<Buffer> {
  const header = await dkimSignature({
    message: raw,
    domain: 'example.com',
    selector,
    algorithm: key.algorithm,
    key: crypto.createPrivateKey(key.privateKeyPem),
    headerList: SIGNED_HEADERS.join(':'),
    signTime: new Date(Math.round(Date.now() / 1000) * 1000),
    ...oversign,
  });
  return Buffer.concat([Buffer.from(header!.trim() + '\r\n'), raw]);
}

/** The field mailauth's dkimSign makes, called the way postrider called it before. */
async function mailauthField(raw: Buffer, key: GeneratedKey, selector: string): Promise<string> {
  const sign = dkimSign as unknown as (input: Buffer, options: object) => Promise<{ signatures: string; errors: unknown[] }>;
  const result = await sign(raw, {
    headerList: SIGNED_HEADERS.join(':'),
    signatureData: [
      { signingDomain: 'example.com', selector, privateKey: key.privateKeyPem, algorithm: `${key.algorithm}-sha256`, canonicalization: 'relaxed/relaxed' },
    ],
  });
  expect(result.errors).toEqual([]);
  return result.signatures.trim() + '\r\n';
}

function compose(overrides: Partial<ComposeInput> = {}): Promise<Buffer> {
  return composeMessage({
    from: { email: 'news@example.com', name: 'Example News' },
    to: [{ email: 'reader@example.org' }, { email: 'zweite@example.org', name: 'Zoë Zweite' }],
    cc: [{ email: 'cc@example.org' }],
    replyTo: [{ email: 'reply@example.com' }],
    subject: 'Weekly digest – Ausgabe 7, with a subject long enough to be folded over more than one line',
    text: 'Hello reader,\n  this line has   inner  spaces and trailing ones   \n\n\n',
    html: '<p>Hello reader,</p><p>this is the digest.</p>',
    messageId: '<digest-7@example.com>',
    date: '2024-05-06T07:08:09.000Z',
    ...overrides,
  });
}

const withPost = { url: 'https://example.com/unsubscribe/abc', mailto: 'mailto:unsubscribe@example.com' };
// An http URL gets List-Unsubscribe without List-Unsubscribe-Post (compose.ts, RFC 8058 3.1).
const withoutPost = { url: 'http://example.com/unsubscribe/abc' };

describe('DkimSigner against mailauth dkimSign', () => {
  const keys: Partial<Record<DkimAlgorithm, GeneratedKey>> = {};

  beforeAll(() => {
    keys.rsa = generateDkimKey({ algorithm: 'rsa', bits: 2048 });
    keys.ed25519 = generateDkimKey({ algorithm: 'ed25519' });
  });

  beforeEach(() => {
    // Half a second past: mailauth rounds the t= value, so this checks the rounding too.
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(new Date('2025-01-02T03:04:05.600Z'));
  });

  afterEach(() => {
    vi.useRealTimers();
  });

  const cases: Array<[DkimAlgorithm, string, () => Promise<Buffer>]> = [
    ['rsa', 'with List-Unsubscribe-Post', () => compose({ listUnsubscribe: withPost })],
    ['rsa', 'without List-Unsubscribe-Post', () => compose({ listUnsubscribe: withoutPost })],
    ['ed25519', 'with List-Unsubscribe-Post', () => compose({ listUnsubscribe: withPost })],
    ['ed25519', 'without List-Unsubscribe-Post', () => compose({ listUnsubscribe: withoutPost })],
  ];

  for (const [algorithm, what, message] of cases) {
    it(`writes the same ${algorithm} DKIM-Signature field as mailauth, relaxed/relaxed, ${what}`, async () => {
      const raw = await message();
      expect(raw.toString('latin1').includes('List-Unsubscribe-Post:')).toBe(what.startsWith('with '));
      const key = keys[algorithm]!;
      const ours = await signed(raw, key, 'sel1');
      const expected = await mailauthField(raw, key, 'sel1');
      expect(ours.toString('latin1')).toBe(expected + raw.toString('latin1'));
      expect(expected).toContain(`t=${Math.round(Date.parse('2025-01-02T03:04:05.600Z') / 1000)};`);
    });
  }

  it('reads bare LF line ends and an already signed message the way mailauth does', async () => {
    const key = keys.rsa!;
    const lf = Buffer.from('From: a@example.com\nTo: b@example.org\nSubject: lf\n\nline one  \nline two\n\n');
    const signedOnce = await signed(lf, key, 'sel1');
    expect(signedOnce.toString('latin1')).toBe((await mailauthField(lf, key, 'sel1')) + lf.toString('latin1'));
    const signedTwice = await signed(signedOnce, key, 'sel2');
    expect(signedTwice.toString('latin1')).toBe((await mailauthField(signedOnce, key, 'sel2')) + signedOnce.toString('latin1'));
  });

  it('reads CRLF-only messages (hashed without the stream) as mailauth does: empty body, blank-line body, 8-bit, several 64 KiB chunks', async () => {
    const key = keys.rsa!;
    const head = 'From: a@example.com\r\nTo: b@example.org\r\nSubject:  spaced \t out\r\n';
    const bodies = ['', '\r\n\r\n\r\n', 'single spaces only\r\n\r\n', 'no line end', 'Grüße  aus   Köln \t\r\n\r\nzweite Zeile\r\n', `${'x'.repeat(998)}\r\n`.repeat(200) + 'end  \r\n\r\n'];
    const messages = [...bodies.map((b) => Buffer.from(`${head}\r\n${b}`, 'utf8')), Buffer.from('\r\n\r\nbody after an empty header\r\n')];
    for (const raw of messages) {
      expect((await signed(raw, key, 'sel1')).toString('latin1')).toBe((await mailauthField(raw, key, 'sel1')) + raw.toString('latin1'));
    }
  });

  it('hashes bodies that relaxed canonicalization leaves unchanged (the native path) as mailauth\'s hasher does', async () => {
    // No bare LF (the CRLF-only path); tabs, space runs and spaces before CRLF take mailauth's hasher.
    const pieces = ['a', 'Grüße', ' ', '  ', '\t', '\r\n', '\r', '.', '=20', 'x'.repeat(90), '\r\n\r\n', ' \r\n'];
    let seed = 7;
    const next = (n: number): number => (seed = (seed * 1103515245 + 12345) % 2 ** 31) % n;
    const bodies = ['', '\r\n', '\r', 'a', 'a\r', 'a\r\n\r', 'a b\r\n\r\n\r\n', '\r\n\r\nlate start\r\n'];
    for (let i = 0; i < 300; i++) bodies.push(Array.from({ length: next(40) }, () => pieces[next(pieces.length)]).join(''));
    for (const body of bodies) {
      const raw = Buffer.from(`From: a@example.com\r\nSubject: s\r\n\r\n${body}`);
      const hasher = dkimBody('relaxed', 'sha256', false);
      hasher.update(Buffer.from(body));
      expect((await hashForSigning(raw))?.bodyHash, JSON.stringify(body)).toBe(hasher.digest('base64'));
    }
  });

  it('DkimSigner over-signs: h= is the one above with each OVERSIGNED name (and Cc, when present) once more', async () => {
    const key = keys.rsa!;
    const raw = await compose({ listUnsubscribe: withPost });
    const ours = await new DkimSigner().sign({ raw, domain: 'example.com', selector: 'sel1', privateKeyPem: key.privateKeyPem, algorithm: 'rsa' });
    expect(ours.toString('latin1')).toBe((await signed(raw, key, 'sel1', { oversign: OVERSIGNED, oversignPresent: OVERSIGNED_WHEN_PRESENT })).toString('latin1'));
    const plain = hList(await signed(raw, key, 'sel1'));
    expect(hList(ours)).toEqual([...plain, ...OVERSIGNED.map((n) => n.toLowerCase()), 'cc']);
    const noCc = await compose({ cc: [] });
    const noCcSigned = await new DkimSigner().sign({ raw: noCc, domain: 'example.com', selector: 'sel1', privateKeyPem: key.privateKeyPem, algorithm: 'rsa' });
    expect(hList(noCcSigned).filter((n) => n === 'cc')).toEqual([]);
  });

  it('refuses a message without a header/body separator, which mailauth does not sign either', async () => {
    const raw = Buffer.from('From: a@example.com\r\nSubject: no body');
    const sign = dkimSign as unknown as (input: Buffer, options: object) => Promise<{ signatures: string }>;
    const theirs = await sign(raw, { signatureData: [{ signingDomain: 'example.com', selector: 's', privateKey: keys.rsa!.privateKeyPem, algorithm: 'rsa-sha256' }] });
    expect(theirs.signatures.trim()).toBe('');
    const attempt = new DkimSigner().sign({ raw, domain: 'example.com', selector: 's', privateKeyPem: keys.rsa!.privateKeyPem, algorithm: 'rsa' });
    await expect(attempt).rejects.toMatchObject({ code: 'internal_error', message: expect.stringContaining('no signature was produced') });
  });
});

/** The h= names of the first DKIM-Signature field, lower case, in order. */
function hList(raw: Buffer): string[] {
  const sig = raw.toString('latin1').replace(/\r\n[ \t]+/g, ' ').split('\r\n')[0];
  return (/[; ]h=([^;]+);/.exec(sig)?.[1] ?? '').split(':').map((n) => n.trim().toLowerCase());
}

describe('DkimKeyCache', () => {
  it('parses a key once, and again once it has gone unused for its time to live', async () => {
    let now = 1_000;
    const keys = new DkimKeyCache({ ttl: 60_000, now: () => now });
    const pem = generateDkimKey({ algorithm: 'ed25519' }).privateKeyPem;
    // lru-cache reuses a clock reading for 1 ms (its ttlResolution): let that pass between steps.
    const later = async (ms: number) => {
      await new Promise((resolve) => setTimeout(resolve, 5));
      now += ms;
    };
    const first = keys.get(pem);
    await later(59_000);
    expect(keys.get(pem)).toBe(first);
    // Each use renews the key's time: still there 59 s after this last use.
    await later(59_000);
    expect(keys.get(pem)).toBe(first);
    expect([keys.misses, keys.hits]).toEqual([1, 2]);
    await later(61_000);
    expect(keys.get(pem)).not.toBe(first);
    expect([keys.misses, keys.hits]).toEqual([2, 2]);
  });

  it('keeps at most max keys, dropping the least recently used', () => {
    const keys = new DkimKeyCache({ max: 2 });
    const [a, b, c] = Array.from({ length: 3 }, () => generateDkimKey({ algorithm: 'ed25519' }).privateKeyPem);
    keys.get(a);
    keys.get(b);
    keys.get(a);
    keys.get(c); // b is dropped, a stays
    keys.get(a);
    expect([keys.size, keys.misses, keys.hits]).toEqual([2, 3, 2]);
    keys.get(b);
    expect(keys.misses).toBe(4);
  });
});
