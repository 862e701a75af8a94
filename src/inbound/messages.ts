/**
 * The inbound message service (issue 33): the reads of /inbound/messages with their access
 * rules, the retry of a message that failed, and the attachment links its payload carries, so
 * the HTTP handlers only parse and map.
 *
 * Access, as for the queue's messages: reads follow the key's scope (a channel key sees its own
 * channel's messages); another account's or channel's message is 403 forbidden, an unknown (or
 * malformed) id 404 not_found; a retry needs an account-level key, after the message's own
 * visibility. Only a `failed` message is retried (409 conflict otherwise: a `received` one is
 * already due, a `posted` one was answered 2xx).
 */
import { accessibleChannel } from '../channels/service.js';
import { requireAccountKey } from '../domain/access.js';
import { AppError } from '../domain/errors.js';
import type { InboundMessage } from '../domain/inbound-message.js';
import { utcDay } from '../domain/stat-counters.js';
import type { Principal } from '../domain/types.js';
import { isUuid } from '../domain/uuid.js';
import type { InboundCursor, InboundMessageFilter } from '../store/port/inbound-messages.js';
import type { StorePort } from '../store/port/index.js';
import type { InboundAttachment } from './attachment-at.js';

export interface InboundMessageServiceOptions {
  store: Pick<StorePort, 'inboundMessages' | 'channels'>;
  /** Scheduler time (queue/clock.ts now()), as the poster compares due times with it. */
  now?: () => number;
  /** A message became due (a retry): wake the poster rather than wait for its next planned look. */
  onDue?: () => void;
  /**
   * The attachment at `index` of a raw message (attachment-at.ts), null when there is none: the
   * worker pool's, as a 25 MB attachment is a parse of 34 MB. The raw bytes are handed over.
   */
  attachmentAt: (input: { raw: Buffer; index: number }) => Promise<InboundAttachment | null>;
}

/** The list's filters as the query gives them (already checked for form): the store's, with one channelId in place of the scope. */
export type InboundMessageQuery = Omit<InboundMessageFilter, 'accountId' | 'channelIds'> & { channelId?: string };

export class InboundMessageService {
  constructor(private readonly o: InboundMessageServiceOptions) {}

  private now(): number {
    return this.o.now?.() ?? Date.now();
  }

  /** One page, newest first, in the key's scope; a channelId outside it is 404 channel_not_found or 403. */
  async list(p: Principal, q: InboundMessageQuery): Promise<{ results: InboundMessage[]; next: InboundCursor | null }> {
    const channelId = q.channelId === undefined ? p.channelId : (await accessibleChannel(this.o.store, p, q.channelId)).id;
    const { channelId: _c, ...filters } = q;
    return this.o.store.inboundMessages.list({ ...filters, accountId: p.accountId, channelIds: channelId ? [channelId] : undefined });
  }

  /**
   * Received messages per UTC day of [fromMs, toMs] (zeros included) in the key's scope, counted
   * when they were committed (retention leaves the counts); a channelId outside the scope is 404
   * channel_not_found or 403.
   */
  async receivedPerDay(p: Principal, q: { channelId?: string; fromMs: number; toMs: number }): Promise<{ day: number; received: number }[]> {
    const channelId = q.channelId === undefined ? p.channelId : (await accessibleChannel(this.o.store, p, q.channelId)).id;
    const fromDay = utcDay(q.fromMs);
    const toDay = utcDay(q.toMs);
    return this.o.store.inboundMessages.receivedPerDay({ accountId: p.accountId, channelIds: channelId ? [channelId] : undefined, fromDay, toDay });
  }

  /** The message a request names, if the principal may see it (404 unknown or malformed, 403 another account's or channel's). */
  async visibleTo(p: Principal, id: string): Promise<InboundMessage> {
    const m = isUuid(id) ? await this.o.store.inboundMessages.get(id.toLowerCase()) : undefined;
    // A deleted channel's messages are gone from the 204 on, whatever its purge has reached.
    if (!m || (await this.o.store.channels.isDeleted(m.channelId))) throw notFound(id);
    if (m.accountId !== p.accountId || (p.channelId && m.channelId !== p.channelId)) {
      throw new AppError('forbidden', 'The API key may not access this inbound message');
    }
    return m;
  }

  /** The message as received (message/rfc822); 404 when retention removed its bytes. */
  async raw(p: Principal, id: string): Promise<Buffer> {
    const m = await this.visibleTo(p, id);
    const raw = await this.o.store.inboundMessages.raw(m.id);
    if (!raw) throw new AppError('not_found', `The raw message of inbound message ${m.id} is gone`);
    return raw;
  }

  /** A `failed` message becomes `received` and due now, its attempts kept; anything else is 409 conflict. */
  async retry(p: Principal, id: string): Promise<InboundMessage> {
    const m = await this.visibleTo(p, id);
    requireAccountKey(p);
    if (m.status !== 'failed') throw notRetriable(m);
    const again = await this.o.store.inboundMessages.requeue(m.id, this.now());
    if (!again) throw notFound(m.id);
    this.o.onDue?.();
    return again;
  }

  /**
   * The attachment at `index` of the message's payload (`attachments[index]`): the raw message
   * is read with the payload's limits, so the index names the same attachment. 404 when there
   * is none at that index.
   */
  async attachment(p: Principal, id: string, index: number): Promise<InboundAttachment> {
    const raw = await this.raw(p, id);
    const found = await this.o.attachmentAt({ raw, index });
    if (!found) throw new AppError('not_found', `Inbound message ${id} has no attachment ${index}`);
    return found;
  }
}

function notFound(id: string): AppError {
  return new AppError('not_found', `Inbound message ${id} does not exist`);
}

function notRetriable(m: InboundMessage): AppError {
  const why = m.status === 'received' ? 'it is already due for its next POST' : 'it was posted';
  return new AppError('conflict', `Inbound message ${m.id} cannot be retried: ${why}`);
}
