/**
 * EngagementPort (store/port/engagement.ts): each verb commits its event and the suppression it
 * implies together, and decides what is new inside that commit: a repeated unsubscribe,
 * bounce report or complaint records nothing, even when the repeats race each other.
 */
import { randomUUID } from 'node:crypto';
import { expect, it } from 'vitest';
import type { EventSubject } from '../../src/domain/event-subject.js';
import type { EventType, MailType } from '../../src/domain/types.js';
import type { StorePort } from '../../src/store/port/index.js';
import { eachEngine } from './engines.js';
import { seedEvents } from './seed-events.js';

function subjectFor(mailType: MailType = 'broadcast'): EventSubject {
  return { accountId: randomUUID(), channelId: randomUUID(), messageId: randomUUID(), mailType, mailSource: 'api', subject: 'Hello', tags: ['t'], metadata: { k: 'v' } };
}

async function eventsOf(store: StorePort, s: EventSubject, type: EventType): Promise<string[][]> {
  return (await store.events.ofMessage(s.messageId)).filter((e) => e.eventType === type).map((e) => e.recipients);
}

const reason = async (store: StorePort, s: EventSubject, email: string) => (await store.suppressions.get(s.channelId, s.mailType, email))?.reason;

eachEngine('engagement', (ctx) => {
  it('records an open and a click as events copying the message fields, with their details', async () => {
    const s = subjectFor('transactional');
    const at = new Date('2026-05-01T10:00:00Z');
    const opened = await ctx.store.engagement.recordLinkEvent('opened', { subject: s, recipients: ['ann@example.org'], details: { ip: '192.0.2.1' }, at });
    expect(opened).toMatchObject({ ...s, eventType: 'opened', recipients: ['ann@example.org'], details: { ip: '192.0.2.1' }, timestamp: at.toISOString() });
    await ctx.store.engagement.recordLinkEvent('clicked', { subject: s, recipients: ['ann@example.org'], details: { link: 'https://example.org/' } });
    await ctx.store.engagement.recordLinkEvent('opened', { subject: s, recipients: ['ann@example.org'], details: {} });
    const events = await ctx.store.events.ofMessage(s.messageId);
    expect(events.map((e) => e.eventType)).toEqual(['opened', 'clicked', 'opened']);
    expect(await ctx.store.suppressions.list(s.channelId)).toEqual([]);
  });

  it('unsubscribes for the mail type of the message and records the event for the addresses newly suppressed', async () => {
    const s = subjectFor('broadcast');
    await ctx.store.suppressions.apply(s.channelId, 'broadcast', [{ op: 'add', email: 'bob@example.org', reason: 'bounce' }]);
    expect(await ctx.store.engagement.unsubscribe({ subject: s, recipients: ['ann@example.org', 'bob@example.org'], details: { ip: '192.0.2.1' } })).toEqual(['ann@example.org']);
    expect(await reason(ctx.store, s, 'ann@example.org')).toBe('unsubscribe');
    expect(await reason(ctx.store, s, 'bob@example.org')).toBe('bounce');
    expect(await ctx.store.suppressions.is(s.channelId, 'transactional', 'ann@example.org')).toBe(false);
    expect(await eventsOf(ctx.store, s, 'unsubscribed')).toEqual([['ann@example.org']]);
  });

  it('changes and records nothing for a repeated unsubscribe', async () => {
    const s = subjectFor();
    await ctx.store.engagement.unsubscribe({ subject: s, recipients: ['ann@example.org'], details: {} });
    expect(await ctx.store.engagement.unsubscribe({ subject: s, recipients: ['ann@example.org'], details: {} })).toEqual([]);
    expect(await eventsOf(ctx.store, s, 'unsubscribed')).toHaveLength(1);
  });

  it('resubscribes only what an unsubscribe suppressed, with an event only when something was lifted', async () => {
    const s = subjectFor();
    await ctx.store.engagement.unsubscribe({ subject: s, recipients: ['ann@example.org'], details: {} });
    await ctx.store.suppressions.apply(s.channelId, s.mailType, [{ op: 'add', email: 'bob@example.org', reason: 'manual' }]);
    expect(await ctx.store.engagement.resubscribe({ subject: s, recipients: ['ann@example.org', 'bob@example.org', 'cat@example.org'], details: {} })).toEqual(['ann@example.org']);
    expect(await reason(ctx.store, s, 'ann@example.org')).toBeUndefined();
    expect(await reason(ctx.store, s, 'bob@example.org')).toBe('manual');
    expect(await ctx.store.engagement.resubscribe({ subject: s, recipients: ['ann@example.org'], details: {} })).toEqual([]);
    expect(await eventsOf(ctx.store, s, 'resubscribed')).toEqual([['ann@example.org']]);
  });

  it('records a hard asynchronous bounce with a suppression, a soft one without', async () => {
    const s = subjectFor('transactional');
    expect(await ctx.store.engagement.recordAsyncBounce({ subject: s, recipients: ['ann@example.org'], details: { async: true }, hard: true })).toEqual(['ann@example.org']);
    expect(await reason(ctx.store, s, 'ann@example.org')).toBe('bounce');
    const soft = subjectFor('transactional');
    expect(await ctx.store.engagement.recordAsyncBounce({ subject: soft, recipients: ['bob@example.org'], details: { async: true }, hard: false })).toEqual(['bob@example.org']);
    expect(await reason(ctx.store, soft, 'bob@example.org')).toBeUndefined();
    expect(await eventsOf(ctx.store, soft, 'bounced')).toEqual([['bob@example.org']]);
  });

  it('records one bounce report per message and recipient, in any case; another message or recipient is new', async () => {
    const s = subjectFor('transactional');
    const bounce = (subject: EventSubject, r: string) => ctx.store.engagement.recordAsyncBounce({ subject, recipients: [r], details: { async: true }, hard: false });
    await bounce(s, 'ann@example.org');
    expect(await bounce(s, 'ANN@example.org')).toEqual([]);
    expect(await bounce(s, 'bob@example.org')).toEqual(['bob@example.org']);
    expect(await bounce({ ...s, messageId: randomUUID() }, 'ann@example.org')).toEqual(['ann@example.org']);
    expect(await eventsOf(ctx.store, s, 'bounced')).toEqual([['ann@example.org'], ['bob@example.org']]);
  });

  it('does not take the delivery attempt\'s own bounce for a report', async () => {
    const s = subjectFor('transactional');
    await seedEvents(ctx, [{ ...s, eventType: 'bounced', timestamp: new Date().toISOString(), recipients: ['ann@example.org'], details: { bounceType: 'hard' } }]);
    expect(await ctx.store.engagement.recordAsyncBounce({ subject: s, recipients: ['ann@example.org'], details: { async: true }, hard: true })).toEqual(['ann@example.org']);
  });

  it('records a complaint with a suppression, once per message and recipient', async () => {
    const s = subjectFor('broadcast');
    const complain = () => ctx.store.engagement.recordComplaint({ subject: s, recipients: ['dee@example.org'], details: { feedbackType: 'abuse' } });
    expect(await complain()).toEqual(['dee@example.org']);
    expect(await reason(ctx.store, s, 'dee@example.org')).toBe('complaint');
    expect(await complain()).toEqual([]);
    expect(await eventsOf(ctx.store, s, 'complained')).toEqual([['dee@example.org']]);
  });

  it('keeps the first suppression reason when a complaint follows an unsubscribe', async () => {
    const s = subjectFor('broadcast');
    await ctx.store.engagement.unsubscribe({ subject: s, recipients: ['eve@example.org'], details: {} });
    expect(await ctx.store.engagement.recordComplaint({ subject: s, recipients: ['eve@example.org'], details: {} })).toEqual(['eve@example.org']);
    expect(await reason(ctx.store, s, 'eve@example.org')).toBe('unsubscribe');
  });

  it('records one event when the same report or unsubscribe races itself', async () => {
    const s = subjectFor('broadcast');
    const r = 'race@example.org';
    const times = <T>(n: number, fn: () => Promise<T>) => Promise.all(Array.from({ length: n }, fn));
    const bounces = await times(6, () => ctx.store.engagement.recordAsyncBounce({ subject: s, recipients: [r], details: { async: true }, hard: true }));
    const complaints = await times(6, () => ctx.store.engagement.recordComplaint({ subject: s, recipients: [r], details: {} }));
    const other = { ...s, messageId: randomUUID() };
    await ctx.store.suppressions.apply(s.channelId, s.mailType, [{ op: 'remove', email: r }]);
    const unsubscribes = await times(6, () => ctx.store.engagement.unsubscribe({ subject: other, recipients: [r], details: {} }));
    for (const answers of [bounces, complaints, unsubscribes]) expect(answers.filter((a) => a.length > 0)).toEqual([[r]]);
    expect(await eventsOf(ctx.store, s, 'bounced')).toHaveLength(1);
    expect(await eventsOf(ctx.store, s, 'complained')).toHaveLength(1);
    expect(await eventsOf(ctx.store, other, 'unsubscribed')).toHaveLength(1);
  });
});
