/**
 * What recipients and their servers tell after delivery: opens, clicks, unsubscribes, resubscribes, asynchronous bounces and complaints.
 *
 * Part of the store port (store/port/index.ts): asynchronous verbs that take and return plain
 * data; what must commit together is one verb. Implemented by the LMDB engine in
 * store/lmdb/repos/ and checked by the contract suite in test/store-contract/.
 *
 * Each verb commits its event (with the statistics counters and the webhook outbox entries every
 * event gets) and the suppression it implies together, so a crash never leaves one without the
 * other; and each decides what is new inside that same commit (a row lock, or a unique key on
 * the suppression), so two requests or reports racing never record the same thing twice.
 */
import type { EventSubject } from '../../domain/event-subject.js';
import type { EventRecord } from '../../domain/types.js';

export type { EventSubject };

export interface EngagementInput {
  subject: EventSubject;
  recipients: string[];
  /** The event's details ({ip, userAgent}, a DSN's fields...). */
  details: Record<string, unknown>;
  /** The event's time; now when absent. */
  at?: Date;
}

export interface EngagementPort {
  /** `opened` or `clicked`: one event, counted by the statistics. Resolves with the event. */
  recordLinkEvent(type: 'opened' | 'clicked', e: EngagementInput): Promise<EventRecord>;

  /**
   * `unsubscribed`: suppresses the recipients for the message's mail type on its channel (reason
   * unsubscribe; insert-if-absent per address) and records the event for those newly suppressed
   * only, so a repeated request (mail clients may POST twice) changes and records nothing.
   * Resolves with the addresses newly suppressed.
   */
  unsubscribe(e: EngagementInput): Promise<string[]>;

  /**
   * `resubscribed`: lifts the suppressions an unsubscribe made (a conditional delete: reason
   * unsubscribe); one for another reason (bounce, complaint, manual) stays. The event names the
   * addresses lifted, which the verb resolves with (none: no event).
   */
  resubscribe(e: EngagementInput): Promise<string[]>;

  /**
   * An asynchronous bounce (a DSN after delivery was accepted): the `bounced` event and, when
   * hard, a suppression (reason bounce). At most one per message and recipient: a recipient that
   * has a bounced event from a report (details.async) already is left out, decided inside the
   * commit so two reports racing see each other. Resolves with the recipients recorded.
   */
  recordAsyncBounce(e: EngagementInput & { hard: boolean }): Promise<string[]>;

  /**
   * A feedback report: the `complained` event and a suppression (reason complaint), at most one
   * per message and recipient as for asynchronous bounces. Resolves with the recipients recorded.
   */
  recordComplaint(e: EngagementInput): Promise<string[]>;
}
