/**
 * The webhook signature, in the scheme Stripe made familiar:
 *   X-Service-Webhook-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256(key, "<t>.<body>")>
 * The key is the webhook's signing key as shown (its UTF-8 bytes, "whsec_" included). Signing
 * the timestamp with the body lets a receiver refuse replays older than a few minutes.
 */
import { createHmac, timingSafeEqual, webcrypto } from 'node:crypto';

export const SIGNATURE_HEADER = 'x-service-webhook-signature';

export function signatureHeader(key: string, body: string, unixSeconds: number): string {
  const t = Math.floor(unixSeconds);
  const v1 = createHmac('sha256', key).update(`${t}.${body}`, 'utf8').digest('hex');
  return `t=${t},v1=${v1}`;
}

/**
 * The same header over a body already in UTF-8 bytes (a received message's JSON, up to tens of
 * MB), computed by WebCrypto, which hashes on libuv's thread pool: createHmac over 34 MB held the
 * main thread about 150 ms. Only the `"<t>."` prefix and the copy of the body are made here.
 */
export async function signatureHeaderOf(key: string, body: Uint8Array, unixSeconds: number): Promise<string> {
  const t = Math.floor(unixSeconds);
  const hmacKey = await webcrypto.subtle.importKey('raw', Buffer.from(key, 'utf8'), { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']);
  const signed = await webcrypto.subtle.sign('HMAC', hmacKey, Buffer.concat([Buffer.from(`${t}.`, 'utf8'), body]));
  return `t=${t},v1=${Buffer.from(signed).toString('hex')}`;
}

/**
 * What a receiver does (also used by the tests): true when one v1 of the header matches and the
 * timestamp is within toleranceSeconds of now.
 */
export function verifySignature(o: { key: string; body: string; header: string; nowSeconds: number; toleranceSeconds?: number }): boolean {
  const parts = o.header.split(',').map((p) => p.trim().split('='));
  const t = Number(parts.find(([k]) => k === 't')?.[1]);
  if (!Number.isInteger(t) || Math.abs(o.nowSeconds - t) > (o.toleranceSeconds ?? 300)) return false;
  const expected = Buffer.from(createHmac('sha256', o.key).update(`${t}.${o.body}`, 'utf8').digest('hex'));
  return parts.some(([k, v]) => k === 'v1' && v !== undefined && v.length === expected.length && timingSafeEqual(Buffer.from(v), expected));
}
