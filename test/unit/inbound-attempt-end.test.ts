/**
 * How one POST of a received message ends (inbound/post-attempt.ts attemptEnd): posted on a 2xx,
 * retried with the webhooks' doubling backoff but never past inbound.postMaxAgeMs after receipt,
 * failed after that or when the attempt cannot ever succeed (its route is gone).
 */
import { describe, expect, it } from 'vitest';
import { receivedMessage } from '../../src/domain/inbound-message.js';
import { attemptEnd } from '../../src/inbound/post-attempt.js';

const T0 = Date.parse('2026-03-01T10:00:00.000Z');
const HOUR = 3_600_000;
const base = receivedMessage(
  { routeId: 'r', accountId: 'a', channelId: 'c', envelope: { mailFrom: '', rcptTo: ['x@y.org'] }, clientAddress: '192.0.2.1', helo: 'h', mailboxHash: null, from: null, subject: null },
  { id: 'm', receivedAt: new Date(T0), size: 1 },
);
const failed = { statusCode: 500, error: 'HTTP 500' };
const o = { giveUp: false, retryBaseMs: 60_000, postMaxAgeMs: 24 * HOUR };
const withAttempts = (n: number) => ({ ...base, attempts: Array.from({ length: n }, () => ({ at: '', statusCode: 500, error: 'HTTP 500' })) });

describe('attemptEnd', () => {
  it('ends posted on a 2xx', () => {
    expect(attemptEnd(base, { statusCode: 204, error: null }, { ...o, now: T0 })).toEqual({ kind: 'posted' });
  });

  it('doubles the wait after each failed attempt', () => {
    expect(attemptEnd(withAttempts(0), failed, { ...o, now: T0 })).toEqual({ kind: 'retry', atMs: T0 + 60_000 });
    expect(attemptEnd(withAttempts(3), failed, { ...o, now: T0 })).toEqual({ kind: 'retry', atMs: T0 + 8 * 60_000 });
  });

  it('never schedules past postMaxAgeMs after receipt, and fails once it has passed', () => {
    expect(attemptEnd(withAttempts(10), failed, { ...o, now: T0 + 23.5 * HOUR })).toEqual({ kind: 'retry', atMs: T0 + 24 * HOUR });
    expect(attemptEnd(withAttempts(11), failed, { ...o, now: T0 + 24 * HOUR })).toEqual({ kind: 'failed' });
  });

  it('fails at once an attempt that can never succeed', () => {
    expect(attemptEnd(base, { statusCode: null, error: 'route deleted' }, { ...o, now: T0, giveUp: true })).toEqual({ kind: 'failed' });
  });
});
