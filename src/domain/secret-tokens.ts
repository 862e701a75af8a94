/**
 * The secrets postrider hands out and keeps only hashed: API key tokens and dashboard session
 * tokens. Both are long random strings, so a fast hash (SHA-256) is enough (no password-style
 * stretching), and looking a secret up by its hash means no secret is ever compared byte by byte
 * in JavaScript. Every store engine makes, hashes and pre-checks them the same way.
 */
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import type { ApiKey } from './types.js';

const API_KEY_PREFIX = 'pr_';

/** SHA-256 of the whole token, hex: what the store keeps and looks up. */
export function hashToken(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}

/** A new API key token: the prefix and 192 random bits. */
export function newApiKeyToken(): string {
  return API_KEY_PREFIX + randomBytes(24).toString('base64url');
}

/** The first characters of a token, shown in listings so operators can tell keys apart. */
export function apiKeyPrefix(token: string): string {
  return token.slice(0, 10);
}

/** False for what cannot be a token of ours (no lookup, no hashing of a huge string). */
export function mayBeApiKeyToken(token: string): boolean {
  return token.startsWith(API_KEY_PREFIX) && token.length <= 200;
}

/** A new dashboard session token (the browser's cookie): 256 random bits. */
export function newSessionToken(): string {
  return randomBytes(32).toString('base64url');
}

/** False for what cannot be a session token of ours. */
export function mayBeSessionToken(token: string): boolean {
  return token.length >= 40 && token.length <= 100;
}

/**
 * A new API key: the token, shown once, and the record both engines store for it, which holds
 * the token's hash and prefix, never the token.
 */
export function newApiKey(input: { accountId: string; channelId: string | null; name?: string }, createdAt: Date): { key: ApiKey; token: string } {
  const token = newApiKeyToken();
  const key: ApiKey = {
    id: randomUUID(),
    accountId: input.accountId,
    channelId: input.channelId,
    name: input.name ?? '',
    prefix: apiKeyPrefix(token),
    hash: hashToken(token),
    createdAt: createdAt.toISOString(),
    revokedAt: null,
  };
  return { key, token };
}
