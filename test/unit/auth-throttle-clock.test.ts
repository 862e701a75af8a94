/**
 * The AUTH failure windows (smtp/throttle.ts) are intervals: a step of the wall clock must not
 * keep a client refused for the length of the step (issue 29).
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { AuthThrottle } from '../../src/smtp/throttle.js';

afterEach(() => {
  vi.useRealTimers();
});

describe('AuthThrottle on its default clock', () => {
  it('lets an address in again a minute after its failures, though the wall clock stepped back an hour meanwhile', async () => {
    // Date and performance faked: setSystemTime steps the wall clock alone, advanceTimersByTime moves both.
    vi.useFakeTimers({ toFake: ['Date', 'performance'] });
    const th = new AuthThrottle({ userLimit: 100, addressLimit: 2 });
    await th.fail('192.0.2.1', 'a');
    await th.fail('192.0.2.1', 'b');
    expect(await th.check('192.0.2.1', 'c')).toBe('address-throttled');
    vi.setSystemTime(Date.now() - 3_600_000);
    vi.advanceTimersByTime(61_000);
    // Before: refused for the hour the failures seemed to lie in the future.
    expect(await th.check('192.0.2.1', 'c')).toBe('ok');
  });
});
