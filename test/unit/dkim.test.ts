import crypto from 'node:crypto';
import { dkimVerify } from 'mailauth/lib/dkim/verify.js';
import { beforeAll, describe, expect, it } from 'vitest';
import { composeMessage } from '../../src/workers/compose.js';
import { DkimSigner, generateDkimKey, splitTxt, type GeneratedKey, type SignInput } from '../../src/workers/dkim.js';
import { TaskError } from '../../src/workers/errors.js';

const DOMAIN = 'example.com';

// One signer for the file, as one worker thread has one: its key cache spans the tests.
const signer = new DkimSigner();
const signMessage = (input: SignInput) => signer.sign(input);

/** A resolver answering like DNS: the TXT record as one record of <=255-byte strings. */
function resolverFor(records: Record<string, string>) {
  return async (name: string, rrtype: string): Promise<string[][]> => {
    const value = records[name.toLowerCase()];
    if (rrtype !== 'TXT' || value === undefined) {
      throw Object.assign(new Error(`queryTxt ENOTFOUND ${name}`), { code: 'ENOTFOUND' });
    }
    return [splitTxt(value)];
  };
}

async function verify(raw: Buffer, records: Record<string, string>) {
  const result = await dkimVerify(raw, { resolver: resolverFor(records) });
  // mailauth reports the algorithm as `algo`, not the declared `algorithm`.
  return result.results.map((r) => ({
    selector: r.selector,
    domain: r.signingDomain,
    result: r.status.result,
    algorithm: (r as unknown as { algo?: string }).algo,
    comment: r.status.comment,
  }));
}

function message() {
  return composeMessage({
    from: { email: 'news@example.com', name: 'Example News' },
    to: [{ email: 'reader@example.org' }],
    cc: [{ email: 'cc@example.org' }],
    replyTo: [{ email: 'reply@example.com' }],
    subject: 'Weekly digest – Ausgabe 7',
    text: 'Hello reader,\nthis is the digest.\n',
    html: '<p>Hello reader,</p><p>this is the digest.</p>',
    messageId: '<digest-7@example.com>',
    date: '2024-05-06T07:08:09.000Z',
    listUnsubscribe: { url: 'https://example.com/unsubscribe/abc', mailto: 'mailto:unsubscribe@example.com' },
  });
}

function signedHeaderNames(raw: Buffer): string[] {
  // The first field after unfolding (RFC 5322 2.2.3) is the new DKIM-Signature.
  const sig = raw.toString('latin1').replace(/\r\n[ \t]+/g, ' ').split('\r\n')[0];
  expect(sig).toMatch(/^DKIM-Signature:/);
  const h = /[; ]h=([^;]+);/.exec(sig)?.[1] ?? '';
  return h.split(':').map((s) => s.trim().toLowerCase());
}

describe('generateDkimKey', () => {
  it('publishes an RSA key as base64 SPKI DER in a DKIM1 TXT value', () => {
    const key = generateDkimKey({ algorithm: 'rsa' });
    expect(key.algorithm).toBe('rsa');
    const m = /^v=DKIM1; k=rsa; p=([A-Za-z0-9+/]+=*)$/.exec(key.dnsValue);
    expect(m).not.toBeNull();
    const pub = crypto.createPublicKey({ key: Buffer.from(m![1], 'base64'), format: 'der', type: 'spki' });
    expect(pub.asymmetricKeyDetails?.modulusLength).toBe(2048);
    // The published key is the public half of the private key.
    const derived = crypto.createPublicKey(key.privateKeyPem).export({ format: 'der', type: 'spki' });
    expect(derived.toString('base64')).toBe(m![1]);
  });

  it('honours the RSA key size', () => {
    const key = generateDkimKey({ algorithm: 'rsa', bits: 1024 });
    expect(crypto.createPrivateKey(key.privateKeyPem).asymmetricKeyDetails?.modulusLength).toBe(1024);
  });

  it('rejects RSA key sizes below 1024 bits (RFC 8301) as validation_failed on bits', () => {
    expect(() => generateDkimKey({ algorithm: 'rsa', bits: 512 })).toThrow(expect.objectContaining({ code: 'validation_failed', field: 'bits' }));
  });

  it('publishes an ed25519 key as the raw 32-byte public key, not SPKI (RFC 8463 4.2)', () => {
    const key = generateDkimKey({ algorithm: 'ed25519' });
    const m = /^v=DKIM1; k=ed25519; p=([A-Za-z0-9+/]+=*)$/.exec(key.dnsValue);
    expect(m).not.toBeNull();
    const raw = Buffer.from(m![1], 'base64');
    expect(raw).toHaveLength(32);
    const spki = crypto.createPublicKey(key.privateKeyPem).export({ format: 'der', type: 'spki' });
    expect(Buffer.compare(spki.subarray(spki.length - 32), raw)).toBe(0);
  });
});

describe('splitTxt', () => {
  it('splits into 255-byte strings that join back to the value', () => {
    const value = 'x'.repeat(600);
    const chunks = splitTxt(value);
    expect(chunks.map((c) => c.length)).toEqual([255, 255, 90]);
    expect(chunks.join('')).toBe(value);
  });

  it('keeps a short value as one string and an empty value as one empty string', () => {
    expect(splitTxt('v=DKIM1; k=ed25519; p=abc')).toEqual(['v=DKIM1; k=ed25519; p=abc']);
    expect(splitTxt('')).toEqual(['']);
  });

  it('counts bytes, not characters, and never splits a UTF-8 sequence', () => {
    const value = 'a' + 'é'.repeat(200); // 1 + 400 bytes
    const chunks = splitTxt(value);
    expect(chunks.map((c) => Buffer.byteLength(c))).toEqual([255, 146]);
    expect(chunks.join('')).toBe(value);
  });

  it('needs several strings for an RSA-2048 record', () => {
    const { dnsValue } = generateDkimKey({ algorithm: 'rsa' });
    const chunks = splitTxt(dnsValue);
    expect(chunks.length).toBeGreaterThan(1);
    expect(chunks.every((c) => Buffer.byteLength(c) <= 255)).toBe(true);
  });
});

describe('signMessage', () => {
  let rsa: GeneratedKey;
  let ed: GeneratedKey;
  let records: Record<string, string>;

  beforeAll(() => {
    rsa = generateDkimKey({ algorithm: 'rsa', bits: 2048 });
    ed = generateDkimKey({ algorithm: 'ed25519' });
    records = { [`rsa1._domainkey.${DOMAIN}`]: rsa.dnsValue, [`ed1._domainkey.${DOMAIN}`]: ed.dnsValue };
  });

  it('signs with RSA-2048 so that mailauth verifies it as pass', async () => {
    const signed = await signMessage({ raw: await message(), domain: DOMAIN, selector: 'rsa1', privateKeyPem: rsa.privateKeyPem, algorithm: 'rsa' });
    expect(signed.toString('latin1')).toMatch(/^DKIM-Signature: v=1; a=rsa-sha256; c=relaxed\/relaxed; d=example\.com;/);
    expect(await verify(signed, records)).toEqual([{ selector: 'rsa1', domain: DOMAIN, result: 'pass', algorithm: 'rsa-sha256', comment: undefined }]);
  });

  it('parses each private key once per thread and still signs every message correctly', async () => {
    const before = { hits: signer.keys.hits, misses: signer.keys.misses };
    const other = generateDkimKey({ algorithm: 'rsa', bits: 2048 });
    const r = { ...records, [`rsa2._domainkey.${DOMAIN}`]: other.dnsValue };
    for (let i = 0; i < 3; i++) {
      const signed = await signMessage({ raw: await message(), domain: DOMAIN, selector: 'rsa2', privateKeyPem: other.privateKeyPem, algorithm: 'rsa' });
      expect((await verify(signed, r))[0].result).toBe('pass');
    }
    // One parse for the new key, two signatures from the cache.
    expect(signer.keys.misses - before.misses).toBe(1);
    expect(signer.keys.hits - before.hits).toBe(2);
  });

  it('signs with ed25519 so that mailauth verifies it as pass', async () => {
    const signed = await signMessage({ raw: await message(), domain: DOMAIN, selector: 'ed1', privateKeyPem: ed.privateKeyPem, algorithm: 'ed25519' });
    expect(await verify(signed, records)).toEqual([{ selector: 'ed1', domain: DOMAIN, result: 'pass', algorithm: 'ed25519-sha256', comment: undefined }]);
  });

  it('returns the original message unchanged after the new signature field', async () => {
    const raw = await message();
    const signed = await signMessage({ raw, domain: DOMAIN, selector: 'ed1', privateKeyPem: ed.privateKeyPem, algorithm: 'ed25519' });
    expect(Buffer.compare(signed.subarray(signed.length - raw.length), raw)).toBe(0);
    const prefix = signed.subarray(0, signed.length - raw.length).toString('latin1');
    expect(prefix).toMatch(/^DKIM-Signature: [^]*\r\n$/);
    expect(prefix.replace(/\r\n[ \t]/g, '')).not.toContain('\r\n\r\n');
  });

  it('accepts the message as a string as well', async () => {
    const raw = (await message()).toString('latin1');
    const signed = await signMessage({ raw, domain: DOMAIN, selector: 'ed1', privateKeyPem: ed.privateKeyPem, algorithm: 'ed25519' });
    expect((await verify(signed, records))[0].result).toBe('pass');
  });

  it('covers From, To, Cc, Subject, Date, Message-ID, Reply-To, MIME-Version, Content-Type and both List-Unsubscribe fields', async () => {
    const signed = await signMessage({ raw: await message(), domain: DOMAIN, selector: 'rsa1', privateKeyPem: rsa.privateKeyPem, algorithm: 'rsa' });
    const h = signedHeaderNames(signed);
    for (const name of ['from', 'to', 'cc', 'subject', 'date', 'message-id', 'reply-to', 'mime-version', 'content-type', 'list-unsubscribe', 'list-unsubscribe-post']) {
      expect(h).toContain(name);
    }
  });

  it('does not pass verification after the body was changed', async () => {
    const signed = await signMessage({ raw: await message(), domain: DOMAIN, selector: 'rsa1', privateKeyPem: rsa.privateKeyPem, algorithm: 'rsa' });
    const tampered = Buffer.from(signed.toString('latin1').replace('this is the digest.', 'this is the DIGEST.'), 'latin1');
    expect(tampered.equals(signed)).toBe(false);
    const [res] = await verify(tampered, records);
    expect(res.result).not.toBe('pass');
    // mailauth reports a body hash mismatch as neutral with this comment, not as fail.
    expect(res.comment).toBe('body hash did not verify');
  });

  it('does not pass verification after a signed header was changed', async () => {
    const signed = await signMessage({ raw: await message(), domain: DOMAIN, selector: 'ed1', privateKeyPem: ed.privateKeyPem, algorithm: 'ed25519' });
    const tampered = Buffer.from(signed.toString('latin1').replace('List-Unsubscribe-Post: List-Unsubscribe=One-Click', 'List-Unsubscribe-Post: nothing'), 'latin1');
    expect(tampered.equals(signed)).toBe(false);
    expect((await verify(tampered, records))[0].result).toBe('fail');
  });

  it('keeps an existing DKIM-Signature, and both signatures still pass', async () => {
    const once = await signMessage({ raw: await message(), domain: DOMAIN, selector: 'rsa1', privateKeyPem: rsa.privateKeyPem, algorithm: 'rsa' });
    const twice = await signMessage({ raw: once, domain: DOMAIN, selector: 'ed1', privateKeyPem: ed.privateKeyPem, algorithm: 'ed25519' });
    expect(twice.toString('latin1').match(/^DKIM-Signature:/gm)).toHaveLength(2);
    expect(Buffer.compare(twice.subarray(twice.length - once.length), once)).toBe(0);
    const results = await verify(twice, records);
    expect(results.map((r) => [r.selector, r.result])).toEqual([
      ['ed1', 'pass'],
      ['rsa1', 'pass'],
    ]);
  });

  it('fails verification with a key that does not match the published one', async () => {
    const other = generateDkimKey({ algorithm: 'ed25519' });
    const signed = await signMessage({ raw: await message(), domain: DOMAIN, selector: 'ed1', privateKeyPem: other.privateKeyPem, algorithm: 'ed25519' });
    expect((await verify(signed, records))[0].result).toBe('fail');
  });

  it('throws instead of returning an unsigned message when the key does not fit the algorithm', async () => {
    const attempt = signMessage({ raw: await message(), domain: DOMAIN, selector: 'ed1', privateKeyPem: ed.privateKeyPem, algorithm: 'rsa' });
    await expect(attempt).rejects.toBeInstanceOf(TaskError);
    await expect(attempt).rejects.toMatchObject({ code: 'internal_error', message: expect.stringContaining('Invalid key type') });
  });

  it('throws on a private key that cannot be read', async () => {
    const attempt = signMessage({ raw: await message(), domain: DOMAIN, selector: 'x', privateKeyPem: 'not a key', algorithm: 'rsa' });
    await expect(attempt).rejects.toMatchObject({ code: 'internal_error' });
  });
});
