/** The messages' reads (MessagesPort): records, bodies, the full scan and client Message-ID lookups. */
import { bareMessageId } from '../../domain/message-id.js';
import type { MessageRecord } from '../../domain/types.js';
import type { Db } from './client.js';

export async function getMessage(db: Db, id: string): Promise<MessageRecord | undefined> {
  const [row] = await db<{ doc: MessageRecord }[]>`SELECT doc FROM messages WHERE id = ${id}`;
  return row?.doc;
}

export async function getBody(db: Db, id: string): Promise<Buffer | undefined> {
  const [row] = await db<{ body: Buffer }[]>`SELECT body FROM message_bodies WHERE message_id = ${id}`;
  return row?.body;
}

/** The record and its body in one statement (MessagesPort.withBody): delivery's load, one round trip per attempt. */
export async function getWithBody(db: Db, id: string): Promise<{ message: MessageRecord; body: Buffer } | undefined> {
  const [row] = await db<{ doc: MessageRecord; body: Buffer }[]>`
    SELECT m.doc, b.body FROM messages m JOIN message_bodies b ON b.message_id = m.id WHERE m.id = ${id}`;
  return row && { message: row.doc, body: row.body };
}

/** How many message records the store holds (a count of the table: for operators and tests, not per request). */
export async function countMessages(db: Db): Promise<number> {
  const [row] = await db<{ n: number }[]>`SELECT count(*)::int8 AS n FROM messages`;
  return row?.n ?? 0;
}

/** Every message record, in id order: a full scan, for operators and checks. */
export async function allMessages(db: Db): Promise<MessageRecord[]> {
  const rows = await db<{ doc: MessageRecord }[]>`SELECT doc FROM messages ORDER BY id`;
  return rows.map((r) => r.doc);
}

/** At most this many ids per lookup (as the LMDB engine's). */
const CLIENT_ID_MATCHES = 100;

/** The ids of the account's messages whose client Message-ID is `header` (with or without brackets): one index range. */
export async function messagesByClientMessageId(db: Db, accountId: string, header: string): Promise<string[]> {
  const id = bareMessageId(header);
  if (!id) return [];
  const rows = await db<{ message_id: string }[]>`
    SELECT message_id FROM client_message_ids WHERE account_id = ${accountId} AND client_id = ${id}
    ORDER BY message_id LIMIT ${CLIENT_ID_MATCHES}`;
  return rows.map((r) => r.message_id);
}
