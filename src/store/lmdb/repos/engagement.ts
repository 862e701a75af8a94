/** The LMDB engine's LmdbEngagement: the port's verbs over the functions of store/lmdb/. */
import type { EventRecord } from '../../../domain/types.js';
import type { Store } from '../env.js';
import type { EngagementPort } from '../../port/index.js';
import type { EngagementInput } from '../../port/engagement.js';
import { recordAsyncBounce, recordComplaint, recordEngagement, recordResubscribe, recordUnsubscribe } from '../engagement.js';

/** Each verb is one Store.write: its check (suppressed yet? reported yet?) runs inside it. */
export class LmdbEngagement implements EngagementPort {
  constructor(private readonly store: Store) {}

  recordLinkEvent(type: 'opened' | 'clicked', e: EngagementInput): Promise<EventRecord> {
    return recordEngagement(this.store, type, e);
  }

  unsubscribe(e: EngagementInput): Promise<string[]> {
    return recordUnsubscribe(this.store, e);
  }

  resubscribe(e: EngagementInput): Promise<string[]> {
    return recordResubscribe(this.store, e);
  }

  recordAsyncBounce(e: EngagementInput & { hard: boolean }): Promise<string[]> {
    return recordAsyncBounce(this.store, e);
  }

  recordComplaint(e: EngagementInput): Promise<string[]> {
    return recordComplaint(this.store, e);
  }
}
