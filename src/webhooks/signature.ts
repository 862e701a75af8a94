/**
 * The webhook signature, in the scheme Stripe made familiar:
 *   X-Service-Webhook-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256(key, "<t>.<body>")>
 * The key is the webhook's signing key as shown (its UTF-8 bytes, "whsec_" included). Signing
 * the timestamp with the body lets a receiver refuse replays older than a few minutes.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { setImmediate as nextTurn } from 'node:timers/promises';

export const SIGNATURE_HEADER = 'x-service-webhook-signature';

export function signatureHeader(key: string, body: string, unixSeconds: number): string {
  const t = Math.floor(unixSeconds);
  const v1 = createHmac('sha256', key).update(`${t}.${body}`, 'utf8').digest('hex');
  return `t=${t},v1=${v1}`;
}

/** Bytes hashed per turn of the event loop by signatureHeaderOf: 1-2 ms of SHA-256. */
const HASH_CHUNK_BYTES = 1024 * 1024;

/**
 * The same header over a body already in UTF-8 bytes (a received message's JSON, up to tens of
 * MB), hashed a chunk per turn of the event loop. Over 34 MB, createHmac on the string
 * (`"<t>.<body>"`, encoded first) held the main thread about 150 ms; WebCrypto, though it hashes
 * on libuv's pool, first copies its input there (with the prefix joined on: 50-130 ms).
 */
export async function signatureHeaderOf(key: string, body: Uint8Array, unixSeconds: number): Promise<string> {
  const t = Math.floor(unixSeconds);
  const hmac = createHmac('sha256', key).update(`${t}.`, 'utf8');
  for (let at = 0; at < body.length; at += HASH_CHUNK_BYTES) {
    if (at > 0) await nextTurn();
    hmac.update(body.subarray(at, at + HASH_CHUNK_BYTES));
  }
  return `t=${t},v1=${hmac.digest('hex')}`;
}

/**
 * What a receiver does (also used by the tests): true when one v1 of the header matches and the
 * timestamp is within toleranceSeconds of now.
 */
export function verifySignature(o: { key: string; body: string; header: string; nowSeconds: number; toleranceSeconds?: number }): boolean {
  const parts = o.header.split(',').map((p) => p.trim().split('='));
  const t = Number(parts.find(([k]) => k === 't')?.[1]);
  if (!Number.isInteger(t) || Math.abs(o.nowSeconds - t) > (o.toleranceSeconds ?? 300)) return false;
  const expected = createHmac('sha256', o.key).update(`${t}.${o.body}`, 'utf8').digest();
  // Bytes are compared, not characters: timingSafeEqual throws on buffers of unequal length.
  const matches = (v: string | undefined): boolean => {
    const given = Buffer.from(v ?? '', 'hex');
    return given.length === expected.length && timingSafeEqual(given, expected);
  };
  return parts.some(([k, v]) => k === 'v1' && matches(v));
}
