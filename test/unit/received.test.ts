import { describe, expect, it } from 'vitest';
import { rfc5322Date } from '../../src/domain/date-header.js';
import { receivedField } from '../../src/submission/received.js';

const at = new Date('2026-11-03T04:05:06.789Z');

describe('receivedField (RFC 5321 4.4)', () => {
  it.each([
    ['192.0.2.7', '[192.0.2.7]'],
    ['::ffff:192.0.2.7', '[192.0.2.7]'],
    ['2001:db8::1', '[IPv6:2001:db8::1]'],
  ])('writes the client %s as the address literal %s', (address, literal) => {
    const f = receivedField({ by: 'mta.example.com', helo: 'client.example', address, secure: true }, 'id-1', at, '\r\n');
    expect(f.raw).toBe(`Received: from client.example (${literal})\r\n\tby mta.example.com with ESMTPSA id id-1;\r\n\tTue, 03 Nov 2026 04:05:06 +0000`);
  });

  it('names no client when the operator hides it, and ESMTPA without TLS', () => {
    const f = receivedField({ by: 'mta.example.com', helo: null, address: null, secure: false }, 'id-2', at, '\n');
    expect(f.raw).toBe('Received: from unknown\n\tby mta.example.com with ESMTPA id id-2;\n\tTue, 03 Nov 2026 04:05:06 +0000');
  });

  it('a message made here: from localhost, no unregistered WITH protocol, what made it as a comment', () => {
    const f = receivedField({ by: 'mta.example.com', local: 'TLS-RPT report' }, 'id-3', at, '\r\n');
    expect(f.raw).toBe('Received: from localhost\r\n\tby mta.example.com id id-3\r\n\t(TLS-RPT report);\r\n\tTue, 03 Nov 2026 04:05:06 +0000');
  });
});

describe('rfc5322Date', () => {
  it('writes a numeric zone, not the obsolete GMT (RFC 5322 3.3, 4.3)', () => {
    expect(rfc5322Date(at)).toBe('Tue, 03 Nov 2026 04:05:06 +0000');
  });
});
