/**
 * The client's own Message-ID → our message. SMTP submission keeps the Message-ID the client
 * wrote (RFC 5322 3.6.4), so a feedback report (RFC 5965) that carries only the original's
 * headers names that id, not ours. The index is written with the message (store/messages.ts)
 * and keyed by account first: a lookup is always for one account, so one account's report can
 * never match another account's message. Messages committed before this index existed have no
 * entry (reports about them are matched by the other keys, or counted as unmatched).
 */
import { bareMessageId } from '../../domain/message-id.js';
import type { MessageRecord } from '../../domain/types.js';
import { dbsOf } from './databases.js';
import type { Store } from './env.js';
import { KEY_MAX } from './layout.js';

export { bareMessageId };

/** Our own ids (`<messageId@domain>`) are found by their message id and need no entry. */
function clientIdOf(r: Pick<MessageRecord, 'id' | 'messageIdHeader'>): string | undefined {
  const id = bareMessageId(r.messageIdHeader);
  return id && !id.toLowerCase().startsWith(`${r.id}@`) ? id : undefined;
}

/** Inside the commit's write: the message's client Message-ID entry, if it has one. */
export function indexClientMessageIdInTxn(store: Store, r: Pick<MessageRecord, 'id' | 'accountId' | 'messageIdHeader'>): void {
  const id = clientIdOf(r);
  if (id) dbsOf(store).clientMessageIds.put([r.accountId, id, r.id], 1);
}

/**
 * Inside a removal's write, before the record goes: its entry goes too (retention, channel purge).
 * A caller that has read the record already passes it, not its id, so it is not read twice.
 */
export function forgetClientMessageIdInTxn(store: Store, message: string | Pick<MessageRecord, 'id' | 'accountId' | 'messageIdHeader'>): void {
  const r = typeof message === 'string' ? (dbsOf(store).messages.get(message) as MessageRecord | undefined) : message;
  const id = r && clientIdOf(r);
  if (r && id) dbsOf(store).clientMessageIds.remove([r.accountId, id, r.id]);
}

/** The ids of the account's messages whose client Message-ID is `header` (with or without brackets). */
export function messagesByClientMessageId(store: Store, accountId: string, header: string): string[] {
  const id = bareMessageId(header);
  if (!id) return [];
  const keys = dbsOf(store).clientMessageIds.getKeys({ start: [accountId, id], end: [accountId, id, KEY_MAX], limit: 100 });
  return [...keys].map((k) => (k as [string, string, string])[2]);
}
