/**
 * EngagementPort: each verb is one transaction holding its event (appendEvents, called last: from
 * there to COMMIT every other appender waits, event-log.ts) and the suppression it implies, and
 * decides what is new inside it by a unique key: the suppression's primary key (unsubscribe, a
 * conditional delete for resubscribe) or the report marks (engagement-marks.ts).
 */
import type { EventRecord, EventType } from '../../../domain/types.js';
import type { EngagementInput, EngagementPort } from '../../port/engagement.js';
import type { Tx } from '../client.js';
import type { PgContext } from '../context.js';
import { markReported } from '../engagement-marks.js';
import { appendEvents } from '../event-log.js';
import { addSuppressions, removeUnsubscribes } from '../suppressions-tx.js';

export function pgEngagement(ctx: PgContext): EngagementPort {
  return {
    recordLinkEvent: (type, e) => ctx.begin((tx) => append(tx, type, e, e.recipients)),

    // Insert-if-absent per address (reason unsubscribe): a repeated or racing request inserts nothing.
    unsubscribe: (e) =>
      ctx.begin(async (tx) => {
        const { channelId, mailType } = e.subject;
        const added = await addSuppressions(tx, e.recipients.map((email) => ({ channelId, mailType, email, reason: 'unsubscribe' as const })));
        const fresh = e.recipients.filter((_, i) => added[i]);
        if (fresh.length > 0) await append(tx, 'unsubscribed', e, fresh);
        return fresh;
      }),

    // A conditional delete (reason unsubscribe): a suppression for another reason stays.
    resubscribe: (e) =>
      ctx.begin(async (tx) => {
        const lifted = await removeUnsubscribes(tx, e.subject.channelId, e.subject.mailType, e.recipients);
        if (lifted.length > 0) await append(tx, 'resubscribed', e, lifted);
        return lifted;
      }),

    recordAsyncBounce: (e) => ctx.begin((tx) => recordReport(tx, 'bounced', e, e.hard ? 'bounce' : undefined)),

    recordComplaint: (e) => ctx.begin((tx) => recordReport(tx, 'complained', e, 'complaint')),
  };
}

/** A report (bounce or complaint): the recipients not reported yet get the event and, when asked, the suppression. */
async function recordReport(tx: Tx, type: 'bounced' | 'complained', e: EngagementInput, reason: 'bounce' | 'complaint' | undefined): Promise<string[]> {
  const at = e.at ?? new Date();
  const fresh = await markReported(tx, e.subject, type, e.recipients, at.getTime());
  if (fresh.length === 0) return fresh;
  const { channelId, mailType } = e.subject;
  if (reason) await addSuppressions(tx, fresh.map((email) => ({ channelId, mailType, email, reason })));
  await append(tx, type, { ...e, at }, fresh);
  return fresh;
}

async function append(tx: Tx, eventType: EventType, e: EngagementInput, recipients: string[]): Promise<EventRecord> {
  const [record] = await appendEvents(tx, [{ ...e.subject, eventType, timestamp: (e.at ?? new Date()).toISOString(), recipients, details: e.details }]);
  return record;
}
