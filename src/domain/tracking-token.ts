/**
 * Signed tokens of the public engagement links (open pixel, click redirect, unsubscribe) and of
 * the unsubscribe mailto address. Pure functions: the secret is passed in (it lives in LMDB,
 * store/secrets.ts), so the worker pool can sign while rendering and the HTTP routes can verify.
 *
 * A token is `base64url(payload) "." base64url(HMAC-SHA256(secret, payload)[0..16])`. The payload
 * names the kind of link first, so a token of one kind never passes as another, then the
 * message, the recipient and (click links) the target URL. The target URL is covered by the MAC:
 * a changed URL fails verification, so the redirect endpoint is never an open redirect.
 *
 * Recipients: a message is rendered and signed once for all its recipients (one MIME body per
 * message, delivered per recipient domain), so a token can name a recipient only when the
 * message has exactly one envelope recipient, the normal case of a broadcast entry and of most
 * transactional mail. With several recipients the token names none (`recipient: ''`) and the
 * engagement is attributed to every recipient of the message.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

export type TokenKind = 'open' | 'click' | 'unsubscribe';

export interface TokenClaims {
  kind: TokenKind;
  messageId: string;
  /** The recipient the link was rendered for; '' when the message had several. */
  recipient: string;
  /** Unsubscribe: the channel, so the link keeps working after retention removed the message. */
  channelId?: string;
  /** Click: the target URL (http or https). */
  url?: string;
}

const KIND_CODE: Record<TokenKind, string> = { open: 'o', click: 'c', unsubscribe: 'u' };
const MAC_BYTES = 16;
/** Longer tokens are refused before any work (a URL of a few KB is plenty). */
export const MAX_TOKEN_LENGTH = 12_000;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

function mac(secret: Buffer, data: Buffer | string, bytes = MAC_BYTES): Buffer {
  return createHmac('sha256', secret).update(data).digest().subarray(0, bytes);
}

export function signToken(secret: Buffer, c: TokenClaims): string {
  const fields = [KIND_CODE[c.kind], c.messageId, c.recipient];
  if (c.kind === 'unsubscribe') fields.push(c.channelId ?? '');
  if (c.kind === 'click') fields.push(c.url ?? '');
  const payload = Buffer.from(fields.join('\n'), 'utf8');
  return `${payload.toString('base64url')}.${mac(secret, payload).toString('base64url')}`;
}

/** The claims of a token of the expected kind, or null when it is malformed, altered or forged. */
export function verifyToken(secret: Buffer, token: string, kind: TokenKind): TokenClaims | null {
  if (typeof token !== 'string' || token.length > MAX_TOKEN_LENGTH) return null;
  const dot = token.lastIndexOf('.');
  if (dot <= 0 || !/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/.test(token)) return null;
  const payloadText = token.slice(0, dot);
  const payload = Buffer.from(payloadText, 'base64url');
  // Only the one canonical encoding passes (RFC 4648 3.5): Node's decoder ignores the unused low
  // bits of the last character, so without these checks each token had several spellings that
  // all verified, and an "altered" MAC that only touched those bits still redirected.
  if (payload.toString('base64url') !== payloadText) return null;
  const given = Buffer.from(token.slice(dot + 1), 'ascii');
  const expected = Buffer.from(mac(secret, payload).toString('base64url'), 'ascii');
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return null;
  const fields = payload.toString('utf8').split('\n');
  if (fields[0] !== KIND_CODE[kind] || !UUID.test(fields[1] ?? '')) return null;
  const claims: TokenClaims = { kind, messageId: fields[1], recipient: fields[2] ?? '' };
  if (kind === 'unsubscribe') {
    if (fields.length !== 4 || !UUID.test(fields[3])) return null;
    claims.channelId = fields[3];
  } else if (kind === 'click') {
    // The URL may itself contain newlines only if it was signed that way; it never is (WHATWG
    // serialization percent-encodes them), but rejoin to be exact.
    const url = fields.slice(3).join('\n');
    if (!isHttpUrl(url)) return null;
    claims.url = url;
  } else if (fields.length !== 3) {
    return null;
  }
  return claims;
}

export function isHttpUrl(value: string): boolean {
  try {
    const u = new URL(value);
    return u.protocol === 'http:' || u.protocol === 'https:';
  } catch {
    return false;
  }
}

/**
 * The local part of the List-Unsubscribe mailto address (RFC 2369 3.2): `unsub-<id>-<mac>` with
 * the message id as 32 hex digits and a 64-bit MAC in hex, 55 characters, within the 64 octets
 * of RFC 5321 4.5.3.1.1, and lower case only because relays may fold the case of local parts.
 */
export function unsubscribeLocalPart(secret: Buffer, messageId: string): string {
  const id = messageId.replace(/-/g, '').toLowerCase();
  return `unsub-${id}-${mac(secret, `m\n${messageId}`, 8).toString('hex')}`;
}

/** The message id named by an unsubscribe local part, or null when it is not one of ours. */
export function verifyUnsubscribeLocalPart(secret: Buffer, localPart: string): string | null {
  const m = /^unsub-([0-9a-f]{32})-([0-9a-f]{16})$/.exec(localPart.toLowerCase());
  if (!m) return null;
  const h = m[1];
  const messageId = `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
  const expected = mac(secret, `m\n${messageId}`, 8);
  const given = Buffer.from(m[2], 'hex');
  return timingSafeEqual(given, expected) ? messageId : null;
}
