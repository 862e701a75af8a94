import { describe, expect, it } from 'vitest';
import { authAllowed } from '../../src/smtp/server.js';
import { smtpError, toSmtpError } from '../../src/smtp/replies.js';
import { AppError } from '../../src/domain/errors.js';
import { AuthThrottle } from '../../src/smtp/throttle.js';

describe('SMTP policy', () => {
  it('allows AUTH without TLS only from loopback addresses', () => {
    expect(authAllowed('127.0.0.1', false)).toBe(true);
    expect(authAllowed('127.9.9.9', false)).toBe(true);
    expect(authAllowed('::1', false)).toBe(true);
    expect(authAllowed('::ffff:127.0.0.1', false)).toBe(true);
    expect(authAllowed('192.0.2.10', false)).toBe(false);
    expect(authAllowed('::ffff:192.0.2.10', false)).toBe(false);
    expect(authAllowed('2001:db8::1', false)).toBe(false);
    expect(authAllowed('192.0.2.10', true)).toBe(true);
  });

  it('maps catalogue errors to their SMTP code and enhanced code, and unknown faults to 451 4.3.0', () => {
    expect(toSmtpError(new AppError('recipients_suppressed')).reply).toMatchObject({ responseCode: 550, message: expect.stringMatching(/^5\.7\.1 /) });
    expect(toSmtpError(new AppError('storage_full')).reply).toMatchObject({ responseCode: 452, message: expect.stringMatching(/^4\.3\.1 /) });
    const unknown = toSmtpError(new TypeError('boom'));
    expect(unknown.internal).toBe(true);
    expect(unknown.reply).toMatchObject({ responseCode: 451, message: expect.stringMatching(/^4\.3\.0 /) });
    expect(unknown.reply.message).not.toContain('boom');
    expect(smtpError(550, '5.7.1', 'a\r\nb').message).toBe('5.7.1 a b');
  });

  it('throttles an address after the failure limit within the window and forgets it later', () => {
    let now = 0;
    const th = new AuthThrottle({ limit: 2, windowMs: 1000, now: () => now });
    th.fail('192.0.2.1');
    expect(th.blocked('192.0.2.1')).toBe(false);
    th.fail('192.0.2.1');
    expect(th.blocked('192.0.2.1')).toBe(true);
    expect(th.blocked('192.0.2.2')).toBe(false);
    now = 1001;
    expect(th.blocked('192.0.2.1')).toBe(false);
  });
});
