import { describe, expect, it } from 'vitest';
import { authAllowed } from '../../src/smtp/server.js';
import { smtpError, toSmtpError } from '../../src/smtp/replies.js';
import { AppError } from '../../src/domain/errors.js';
import { AuthThrottle } from '../../src/smtp/throttle.js';
import { LocalCoordination } from '../../src/coordination/local.js';

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

  it('locks a user name for the address that failed with it, for the 10-minute window', async () => {
    let now = 0;
    const th = new AuthThrottle({ userLimit: 2, addressLimit: 100, now: () => now });
    await th.fail('192.0.2.1', 'chan-a');
    expect(await th.check('192.0.2.1', 'chan-a')).toBe('ok');
    await th.fail('192.0.2.1', 'CHAN-A ');
    expect(await th.check('192.0.2.1', 'chan-a')).toBe('user-locked');
    // The same user from another address, and another user from the same address, are not locked.
    expect(await th.check('192.0.2.2', 'chan-a')).toBe('ok');
    expect(await th.check('192.0.2.1', 'chan-b')).toBe('ok');
    now = 10 * 60_000 + 1;
    expect(await th.check('192.0.2.1', 'chan-a')).toBe('ok');
  });

  it('rate-limits an address failing across user names for one minute only, and a success clears its user', async () => {
    let now = 0;
    const th = new AuthThrottle({ userLimit: 100, addressLimit: 3, now: () => now });
    for (const u of ['a', 'b', 'c']) await th.fail('192.0.2.1', u);
    expect(await th.check('192.0.2.1', 'someone-else')).toBe('address-throttled');
    expect(await th.check('192.0.2.9', 'someone-else')).toBe('ok');
    now = 60_001;
    expect(await th.check('192.0.2.1', 'someone-else')).toBe('ok');
    const th2 = new AuthThrottle({ userLimit: 2, addressLimit: 100, now: () => now });
    await th2.fail('192.0.2.1', 'a');
    await th2.succeed('192.0.2.1', 'a');
    await th2.fail('192.0.2.1', 'a');
    expect(await th2.check('192.0.2.1', 'a')).toBe('ok');
  });

  it('shares the failure counts of the throttles given one coordination (the listeners of a node, or a cluster’s nodes)', async () => {
    let now = 0;
    const coordination = new LocalCoordination({ nodeId: 'n1', realTime: () => now });
    const [a, b] = [0, 1].map(() => new AuthThrottle({ userLimit: 100, addressLimit: 2, coordination }));
    await a!.fail('192.0.2.1', 'x');
    await b!.fail('192.0.2.1', 'y');
    expect(await a!.check('192.0.2.1', 'z')).toBe('address-throttled');
    expect(await b!.check('192.0.2.1', 'z')).toBe('address-throttled');
    now = 60_001;
    expect(await b!.check('192.0.2.1', 'z')).toBe('ok');
  });
});
