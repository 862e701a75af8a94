import { describe, expect, it } from 'vitest';
import { statusOf } from '../../src/broadcasts/service.js';
import type { BroadcastCounters, BroadcastRecord } from '../../src/store/port/broadcasts.js';

const NOW = Date.parse('2026-12-01T08:00:00Z');
const AT = '2026-12-01T09:00:00.000Z';

const record = (o: Partial<BroadcastRecord> = {}): BroadcastRecord => ({
  id: 'b1',
  accountId: 'a1',
  channelId: 'c1',
  createdAt: '2026-12-01T07:00:00.000Z',
  state: 'expanding',
  total: 2,
  cursor: 0,
  messages: 0,
  skipped: 0,
  failed: 0,
  common: {},
  ...o,
});
const counters = (finished = 0): BroadcastCounters => ({ finished, canceled: 0, statistics: { sent: 0, delivered: 0, bounced: 0, opened: 0, clicked: 0, complained: 0, unsubscribed: 0 } });

describe("a scheduled broadcast's status", () => {
  it('is scheduled until its time, expanded or not, then the usual statuses', () => {
    expect(statusOf(record({ scheduledAt: AT }), counters(), NOW)).toBe('scheduled');
    const expanded = record({ scheduledAt: AT, state: 'done', cursor: 2, messages: 2 });
    expect(statusOf(expanded, counters(), Date.parse(AT) - 1)).toBe('scheduled');
    expect(statusOf(expanded, counters(), Date.parse(AT))).toBe('processing');
    expect(statusOf(record({ scheduledAt: AT }), counters(), Date.parse(AT) + 1)).toBe('accepted');
    expect(statusOf(expanded, counters(2), Date.parse(AT) + 1)).toBe('completed');
  });

  it('is canceled once canceled, and completed when every message ended before the time (a sandbox channel)', () => {
    expect(statusOf(record({ scheduledAt: AT, state: 'done', canceledAt: '2026-12-01T08:00:00.000Z' }), counters(), NOW)).toBe('canceled');
    expect(statusOf(record({ scheduledAt: AT, state: 'done', cursor: 2, messages: 2 }), counters(2), NOW)).toBe('completed');
  });

  it('is never scheduled without a time', () => {
    expect(statusOf(record(), counters(), NOW)).toBe('accepted');
  });
});
