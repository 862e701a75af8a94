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
