/**
 * The LMDB engine's LmdbEvents: the port's reads over the event log (store/port/events.ts). Each
 * verb runs its whole read synchronously on one snapshot (lmdb-js reads on the main thread) and
 * hands back a resolved promise, so a page and its count still agree and a verb costs its caller
 * a microtask. The activity and message count caches live here, one per open store.
 */
import type { EventRecord } from '../../../domain/types.js';
import type { ActivityFilter, ActivityPage, EventsPort, MessageFilter, MessageOwner, MessagePage, PageOptions } from '../../port/events.js';
import { ActivityQueries, eventLogBounds } from '../activity-query.js';
import type { Store } from '../env.js';
import { accountOfMessageEvents, eventsOfMessage } from '../events.js';
import { MessageQueries } from '../message-query.js';
import { getMessage } from '../messages.js';

export class LmdbEvents implements EventsPort {
  private readonly activity: ActivityQueries;
  private readonly messages: MessageQueries;

  constructor(private readonly store: Store) {
    this.activity = new ActivityQueries(store);
    this.messages = new MessageQueries(store);
  }

  async page(filter: ActivityFilter, opts: PageOptions): Promise<ActivityPage> {
    return this.activity.page(filter, opts);
  }

  async messagePage(filter: MessageFilter, opts: PageOptions): Promise<MessagePage> {
    return this.messages.page(filter, opts);
  }

  async ofMessage(messageId: string): Promise<EventRecord[]> {
    return eventsOfMessage(this.store, messageId);
  }

  async ownerOfMessage(messageId: string): Promise<MessageOwner | undefined> {
    const m = getMessage(this.store, messageId);
    return m ? { accountId: m.accountId, channelId: m.channelId } : accountOfMessageEvents(this.store, messageId);
  }

  async bounds(): Promise<{ floor: number; last: number }> {
    return eventLogBounds(this.store);
  }
}
