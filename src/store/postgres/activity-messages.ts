/**
 * The message list's items (GET /activity/messages): each accepted event with its message record
 * (the messages group's table) and delivery type — the record's, or once retention removed it,
 * its channel's (the channels group's table keeps a deleted channel's row as its tombstone), or
 * 'live' when neither is left (store/port/events.ts MessageListItem). Two statements per page,
 * whatever its size, on the page's snapshot.
 */
import type { DeliveryType, EventRecord, MessageRecord } from '../../domain/types.js';
import type { MessageListItem } from '../port/events.js';
import type { Db } from './client.js';

export async function messageItems(db: Db, accepted: readonly EventRecord[]): Promise<MessageListItem[]> {
  if (accepted.length === 0) return [];
  const [messages, channels] = await Promise.all([
    db<{ doc: MessageRecord }[]>`SELECT doc FROM messages WHERE id = ANY(${accepted.map((e) => e.messageId)}::text[])`,
    db<{ id: string; delivery_type: DeliveryType }[]>`
      SELECT id, delivery_type FROM channels WHERE id = ANY(${[...new Set(accepted.map((e) => e.channelId))]}::text[])`,
  ]);
  const byId = new Map(messages.map((m) => [m.doc.id, m.doc]));
  const typeOf = new Map(channels.map((c) => [c.id, c.delivery_type]));
  return accepted.map((e) => {
    const message = byId.get(e.messageId);
    return { accepted: e, message, deliveryType: message?.deliveryType ?? typeOf.get(e.channelId) ?? 'live' };
  });
}
