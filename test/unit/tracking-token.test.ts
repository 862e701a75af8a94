import { randomBytes, randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { signToken, unsubscribeLocalPart, verifyToken, verifyUnsubscribeLocalPart } from '../../src/domain/tracking-token.js';

const secret = randomBytes(32);
const messageId = randomUUID();

describe('tracking tokens', () => {
  it('round-trips the claims of each kind of link', () => {
    const click = signToken(secret, { kind: 'click', messageId, recipient: 'ann@example.net', url: 'https://example.org/a?b=1' });
    expect(verifyToken(secret, click, 'click')).toEqual({ kind: 'click', messageId, recipient: 'ann@example.net', url: 'https://example.org/a?b=1' });
    const channelId = randomUUID();
    const unsub = signToken(secret, { kind: 'unsubscribe', messageId, recipient: '', channelId });
    expect(verifyToken(secret, unsub, 'unsubscribe')).toEqual({ kind: 'unsubscribe', messageId, recipient: '', channelId });
  });

  it('refuses tokens signed with another key, of another kind, altered or truncated', () => {
    const open = signToken(secret, { kind: 'open', messageId, recipient: 'ann@example.net' });
    expect(verifyToken(randomBytes(32), open, 'open')).toBeNull();
    expect(verifyToken(secret, open, 'click')).toBeNull();
    const [payload, mac] = open.split('.');
    const altered = Buffer.from(Buffer.from(payload, 'base64url').toString().replace('ann', 'bob')).toString('base64url');
    expect(verifyToken(secret, `${altered}.${mac}`, 'open')).toBeNull();
    expect(verifyToken(secret, `${payload}.${mac.slice(0, 10)}`, 'open')).toBeNull();
    expect(verifyToken(secret, 'x'.repeat(20_000), 'open')).toBeNull();
  });

  it('accepts a token only in its one canonical encoding, not with the unused bits of a last character set', () => {
    const open = signToken(secret, { kind: 'open', messageId, recipient: 'ann@example.net' });
    const [payload, mac] = open.split('.');
    // 16 MAC bytes are 22 characters whose last carries 2 bits of data and 4 unused ones; a
    // lenient decoder reads every one of these spellings as the same MAC.
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
    const last = alphabet.indexOf(mac.at(-1)!);
    const spellings = [...alphabet].filter((c, i) => i !== last && i >> 4 === last >> 4);
    expect(spellings).toHaveLength(15);
    for (const c of spellings) {
      const other = mac.slice(0, -1) + c;
      expect(Buffer.from(other, 'base64url').equals(Buffer.from(mac, 'base64url'))).toBe(true);
      expect(verifyToken(secret, `${payload}.${other}`, 'open')).toBeNull();
    }
    expect(verifyToken(secret, open, 'open')).not.toBeNull();
    // A payload of 1 + 1 + 36 + 1 + 14 = 53 bytes leaves 2 unused bits in its last character too.
    const short = signToken(secret, { kind: 'open', messageId, recipient: 'an@example.net' });
    const [shortPayload, shortMac] = short.split('.');
    expect(Buffer.from(shortPayload, 'base64url').length % 3).toBe(2);
    const lastP = alphabet.indexOf(shortPayload.at(-1)!);
    const otherP = shortPayload.slice(0, -1) + alphabet[lastP ^ 1];
    expect(Buffer.from(otherP, 'base64url').equals(Buffer.from(shortPayload, 'base64url'))).toBe(true);
    expect(verifyToken(secret, `${otherP}.${shortMac}`, 'open')).toBeNull();
    expect(verifyToken(secret, short, 'open')).not.toBeNull();
  });

  it('refuses a click token whose signed target is not http(s)', () => {
    const js = signToken(secret, { kind: 'click', messageId, recipient: '', url: 'javascript:alert(1)' });
    expect(verifyToken(secret, js, 'click')).toBeNull();
  });

  it('makes unsubscribe local parts of at most 64 lower-case characters that only verify unaltered', () => {
    const local = unsubscribeLocalPart(secret, messageId);
    expect(local.length).toBeLessThanOrEqual(64);
    expect(local).toBe(local.toLowerCase());
    expect(verifyUnsubscribeLocalPart(secret, local.toUpperCase())).toBe(messageId);
    expect(verifyUnsubscribeLocalPart(secret, local.replace(/.$/, (c) => (c === '0' ? '1' : '0')))).toBeNull();
  });
});
