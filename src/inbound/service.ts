/**
 * What the inbound processor (processor.ts) records once it has tied a mail to a message and a
 * recipient: an asynchronous bounce (RFC 3464), a complaint (RFC 5965) or a List-Unsubscribe
 * mail (RFC 2369 3.2). The processor is the adapter (it reads SMTP mail and decides what it
 * means); this is the service it writes through, as the HTTP routes write through theirs. Each
 * verb is one store verb (store/port/engagement.ts): the event and the suppression it implies
 * commit together, and a repeated report is found inside that commit, so it records nothing.
 */
import { subjectOf } from '../domain/event-subject.js';
import type { MessageRecord } from '../domain/types.js';
import type { StorePort } from '../store/port/index.js';

/** A report about one recipient of a message, with the event's details. */
export interface RecipientReport {
  message: MessageRecord;
  recipient: string;
  details: Record<string, unknown>;
}

export class FeedbackService {
  constructor(private readonly store: Pick<StorePort, 'engagement'>) {}

  /** `bounced`, and for a hard bounce a suppression (reason bounce). Resolves with the recipients recorded: none for a repeat. */
  bounce(r: RecipientReport & { hard: boolean }): Promise<string[]> {
    return this.store.engagement.recordAsyncBounce({ subject: subjectOf(r.message), recipients: [r.recipient], details: r.details, hard: r.hard });
  }

  /** `complained` and a suppression (reason complaint). Resolves with the recipients recorded: none for a repeat. */
  complaint(r: RecipientReport): Promise<string[]> {
    return this.store.engagement.recordComplaint({ subject: subjectOf(r.message), recipients: [r.recipient], details: r.details });
  }

  /** A List-Unsubscribe mail (via mailto): as the one-click URL. Resolves with the addresses newly suppressed. */
  unsubscribe(message: MessageRecord, recipients: string[]): Promise<string[]> {
    return this.store.engagement.unsubscribe({ subject: subjectOf(message), recipients, details: { via: 'mailto' } });
  }
}
