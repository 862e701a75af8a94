/**
 * The webhook signature, in the scheme Stripe made familiar:
 *   X-Service-Webhook-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256(key, "<t>.<body>")>
 * The key is the webhook's signing key as shown (its UTF-8 bytes, "whsec_" included). Signing
 * the timestamp with the body lets a receiver refuse replays older than a few minutes.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

export const SIGNATURE_HEADER = 'x-service-webhook-signature';

export function signatureHeader(key: string, body: string, unixSeconds: number): string {
  const t = Math.floor(unixSeconds);
  const v1 = createHmac('sha256', key).update(`${t}.${body}`, 'utf8').digest('hex');
  return `t=${t},v1=${v1}`;
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
