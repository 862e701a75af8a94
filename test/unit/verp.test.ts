/**
 * The per-recipient bounce address (domain/verp.ts): within RFC 5321's 64 octets, case-folded as
 * relays may fold it, tied to one recipient, and not made without the secret; the old
 * per-message address still parses, without a token.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { parseVerp, verpLocalPart, verpRecipient } from '../../src/domain/verp.js';

const secret = randomBytes(32);
const id = randomUUID();
const recipients = ['ann@example.net', 'bob@example.net', 'cat@example.org'];

describe('per-recipient bounce addresses', () => {
  it('are at most 64 octets (RFC 5321 4.5.3.1.1), lower case, and name the message', () => {
    const local = verpLocalPart(secret, id, 'a-very-long-local-part-of-a-recipient@a-long-domain.example');
    expect(local.length).toBeLessThanOrEqual(64);
    expect(local).toBe(local.toLowerCase());
    expect(parseVerp(`${local}@bounces.example.com`)).toEqual({ messageId: id, token: local.slice(-16) });
  });

  it('name exactly the recipient they were made for, also after a relay upper-cased them', () => {
    for (const r of recipients) {
      const v = parseVerp(`<${verpLocalPart(secret, id, r).toUpperCase()}@BOUNCES.EXAMPLE.COM>`)!;
      expect(verpRecipient(secret, v.messageId, v.token!, recipients)).toBe(r);
    }
  });

  it('name nobody with another secret, another message, or an altered mac', () => {
    const token = parseVerp(verpLocalPart(secret, id, 'ann@example.net'))!.token!;
    expect(verpRecipient(randomBytes(32), id, token, recipients)).toBeUndefined();
    expect(verpRecipient(secret, randomUUID(), token, recipients)).toBeUndefined();
    const altered = (token[0] === '0' ? '1' : '0') + token.slice(1);
    expect(verpRecipient(secret, id, altered, recipients)).toBeUndefined();
  });

  it('parse the old per-message address without a token, and nothing else', () => {
    expect(parseVerp(`bounces+${id}@bounces.example.com`)).toEqual({ messageId: id });
    for (const other of [`bounces+${id}-123@x.com`, `bounces+${id}-${'g'.repeat(16)}@x.com`, 'bounces+1@x.com', `unsub-${id}@x.com`, undefined]) {
      expect(parseVerp(other), other).toBeUndefined();
    }
  });
});
