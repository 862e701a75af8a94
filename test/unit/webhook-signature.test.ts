import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { MAX_RETRY_DELAY_MS, retryDelayMs } from '../../src/domain/webhook.js';
import { signatureHeader, signatureHeaderOf, verifySignature } from '../../src/webhooks/signature.js';

describe('webhook signature', () => {
  const key = 'whsec_test-key';
  const body = '{"eventType":"delivered"}';

  it('is t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>">', () => {
    const header = signatureHeader(key, body, 1_700_000_000.9);
    const expected = createHmac('sha256', key).update(`1700000000.${body}`).digest('hex');
    expect(header).toBe(`t=1700000000,v1=${expected}`);
  });

  it('is the same header over a body given as its UTF-8 bytes (signed off the main thread)', async () => {
    const text = '{"subject":"Grüße ✓ 日本語","text":"a\\u0000b"}';
    expect(await signatureHeaderOf(key, Buffer.from(text, 'utf8'), 1_700_000_000.9)).toBe(signatureHeader(key, text, 1_700_000_000.9));
    expect(await signatureHeaderOf(key, new Uint8Array(0), 1_700_000_000)).toBe(signatureHeader(key, '', 1_700_000_000));
    // Over more than one chunk of the hash (1 MiB), with a multi-byte character across the boundary.
    const long = `${'a'.repeat(1024 * 1024 - 1)}é${'b'.repeat(1024 * 1024 + 7)}`;
    expect(await signatureHeaderOf(key, Buffer.from(long, 'utf8'), 1_700_000_000)).toBe(signatureHeader(key, long, 1_700_000_000));
  });

  it('verifies an untouched body within the tolerance and refuses changes, other keys and old timestamps', () => {
    const header = signatureHeader(key, body, 1_700_000_000);
    expect(verifySignature({ key, body, header, nowSeconds: 1_700_000_100 })).toBe(true);
    expect(verifySignature({ key, body: body.replace('delivered', 'bounced'), header, nowSeconds: 1_700_000_100 })).toBe(false);
    expect(verifySignature({ key: 'whsec_other', body, header, nowSeconds: 1_700_000_100 })).toBe(false);
    expect(verifySignature({ key, body, header, nowSeconds: 1_700_000_301 })).toBe(false);
    expect(verifySignature({ key, body, header: 'garbage', nowSeconds: 1_700_000_000 })).toBe(false);
  });

  it('refuses, without throwing, a v1 as long as the hex in characters but not in bytes', () => {
    // A header octet above 0x7f reads as one latin1 character; in UTF-8 it is two bytes.
    const header = `t=1700000000,v1=${'a'.repeat(63)}é`;
    expect(verifySignature({ key, body, header, nowSeconds: 1_700_000_000 })).toBe(false);
  });
});

describe('webhook retry backoff', () => {
  it('doubles from the base after each failed attempt', () => {
    expect([1, 2, 3, 4, 5].map((n) => retryDelayMs(n, 10_000))).toEqual([10_000, 20_000, 40_000, 80_000, 160_000]);
  });

  it('never waits longer than four hours between attempts', () => {
    expect(retryDelayMs(12, 10_000)).toBe(MAX_RETRY_DELAY_MS);
    expect(retryDelayMs(500, 10_000)).toBe(MAX_RETRY_DELAY_MS);
  });
});
