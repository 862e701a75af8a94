/**
 * The message list (GET /activity/messages). Every message has exactly one `accepted` event,
 * appended when it is committed, carrying its channel, mail type, subject, tags, recipients and
 * creation time. So the message list is the event list restricted to `accepted` events: the same
 * indexes, the same seq cursor (`after` is the accepted event's seq), the same page and count
 * budgets (store/activity-query.ts), and a page costs the same at 10 million messages as at 1,000.
 *
 * Status: a message is `queued` while at least one of its recipients waits for a final outcome
 * (a delivery job queued, leased or retrying: MessageRecord.openJobs > 0) and `sent` once every
 * recipient has one (delivered, bounced or expired), the point where it leaves the queue. Sandbox
 * messages are `sent` at once. The queued ones are kept in `messageQueue`, keyed like the event
 * index by the accepted event's seq, so status=queued walks only the queue and status=sent skips
 * queue members with one key lookup each. Counting: queued is counted over the queue; sent is
 * (all messages − queued).
 */
import type { DeliveryType, EventRecord, MessageRecord } from '../../domain/types.js';
import type { MessageFilter, MessageListItem, MessagePage } from '../port/events.js';
import { ActivityQueries, type PageOptions } from './activity-query.js';
import { getChannelRecord } from './channel-records.js';
import { dbsOf } from './databases.js';
import type { Store } from './env.js';
import { KEY_MAX } from './layout.js';

// The list's shapes are the port's (store/port/events.ts); re-exported for the engine's files.
export type { MessageFilter, MessageListItem, MessagePage };

/** Inside the write that commits a live message, with its accepted event. */
export function queueMessageInTxn(store: Store, accepted: EventRecord): void {
  dbsOf(store).messageQueue.put([accepted.accountId, accepted.seq], Date.parse(accepted.timestamp));
}

/** Inside the write where the message's last delivery job finished (status becomes sent). */
export function dequeueMessageInTxn(store: Store, m: Pick<MessageRecord, 'id' | 'accountId' | 'acceptedSeq'>): void {
  if (m.acceptedSeq !== undefined) {
    dbsOf(store).messageQueue.remove([m.accountId, m.acceptedSeq]);
    return;
  }
  // A record written before acceptedSeq was kept: the accepted event is the message's first, so
  // its seq is the first messageEvents entry.
  for (const key of dbsOf(store).messageEvents.getKeys({ start: [m.id], end: [m.id, KEY_MAX], limit: 1 })) {
    dbsOf(store).messageQueue.remove([m.accountId, (key as [string, number])[1]]);
  }
}

/** Pages of messages with totalCount; one instance per open store (it holds the count cache). */
export class MessageQueries {
  private readonly events: ActivityQueries;

  constructor(private readonly store: Store) {
    this.events = new ActivityQueries(store);
  }

  page(f: MessageFilter, opts: PageOptions): MessagePage {
    // Synchronous: the page, its count, the message records and channels come from one snapshot.
    const page = this.events.page({ ...f, eventTypes: ['accepted'] }, opts);
    // A page's messages come from few channels: each channel's record is read once per page.
    const channelTypes = new Map<string, DeliveryType>();
    const results = page.results.map((accepted) => this.item(accepted, channelTypes));
    return { ...page, results };
  }

  private item(accepted: EventRecord, channelTypes: Map<string, DeliveryType>): MessageListItem {
    const message = dbsOf(this.store).messages.get(accepted.messageId) as MessageRecord | undefined;
    // A record already removed by retention belonged to a finished message: its channel tells.
    return { accepted, message, deliveryType: message?.deliveryType ?? this.channelType(accepted.channelId, channelTypes) };
  }

  private channelType(channelId: string, seen: Map<string, DeliveryType>): DeliveryType {
    let type = seen.get(channelId);
    if (type === undefined) seen.set(channelId, (type = getChannelRecord(this.store, channelId)?.deliveryType ?? 'live'));
    return type;
  }
}
