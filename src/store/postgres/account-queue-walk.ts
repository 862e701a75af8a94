/**
 * QueuePort.walkAccount (store/port/queue.ts): an account's queued messages in queue order
 * (oldest accepted first), for GET /queue and /queue/messages. The account's queued messages are
 * the events group's message_queue ((account_id, accepted_seq) primary key, the LMDB engine's
 * messageQueue), kept by the message commit and by the close of a message's last job
 * (messages-tx.ts). The walk reads it from the cursor on in chunks and, per chunk, the accepted
 * events (by seq), the open jobs and which messages still wait for composition and signing, in
 * one statement each: bounded by scanLimit, so a page costs the same with a million messages
 * queued as with a thousand. A read: no transaction, no lock.
 */
import type { DeliveryJob, EventRecord } from '../../domain/types.js';
import type { QueuedMessage, QueueWalk, QueueWalkResult } from '../port/queue.js';
import type { Db } from './client.js';
import { seqAboveFloor } from './event-floor.js';
import { purgingChannelsOf } from './channels-tx.js';
import { unfinishedAmong } from './messages-tx.js';

/** Queue entries read per statement. */
const CHUNK = 200;

interface QueueKey {
  seq: number;
  message_id: string;
  channel_id: string;
}

export async function walkAccountQueue(db: Db, w: QueueWalk): Promise<QueueWalkResult> {
  // Deleted channels whose purge is pending: their messages are no longer the account's queue.
  const hidden = await purgingChannelsOf(db, w.accountId);
  const messages: QueuedMessage[] = [];
  let scanned = 0;
  let lastSeq = w.afterSeq;
  for (;;) {
    const budget = Math.min(w.limit - messages.length, w.scanLimit - scanned);
    // With the budget spent, one key says whether the queue goes on.
    const asked = budget > 0 ? Math.min(CHUNK, w.scanLimit - scanned) : 1;
    const keys = await queueKeys(db, w.accountId, lastSeq, asked);
    if (keys.length === 0) return { messages, scanned, lastSeq, reachedEnd: true };
    if (budget <= 0) return { messages, scanned, lastSeq, reachedEnd: false };
    const wanted = keys.filter((k) => !hidden.has(k.channel_id) && (!w.channelId || k.channel_id === w.channelId));
    const found = await messagesAt(db, wanted, w.domain);
    for (const k of keys) {
      if (messages.length >= w.limit || scanned >= w.scanLimit) return { messages, scanned, lastSeq, reachedEnd: false };
      scanned++;
      lastSeq = k.seq;
      const m = found.get(k.seq);
      if (m) messages.push(m);
    }
    if (keys.length < asked) return { messages, scanned, lastSeq, reachedEnd: true };
  }
}

async function queueKeys(db: Db, accountId: string, afterSeq: number, limit: number): Promise<QueueKey[]> {
  return db<QueueKey[]>`
    SELECT accepted_seq AS seq, message_id, channel_id FROM message_queue
    WHERE account_id = ${accountId} AND accepted_seq > ${afterSeq}
    ORDER BY accepted_seq LIMIT ${limit}`;
}

/**
 * The queued messages at these keys (by seq): those whose accepted event is still there, at or
 * above the floor (retention may have removed that of a message queued past retention.days,
 * leaving its row below the floor until its partition is dropped) and which have an open job
 * (to `domain` when given).
 */
async function messagesAt(db: Db, keys: readonly QueueKey[], domain: string | undefined): Promise<Map<number, QueuedMessage>> {
  const out = new Map<number, QueuedMessage>();
  if (keys.length === 0) return out;
  const ids = keys.map((k) => k.message_id);
  const [events, jobs, preparing] = await Promise.all([
    db<{ doc: EventRecord }[]>`
      SELECT doc FROM events WHERE seq = ANY(${keys.map((k) => k.seq)}::int8[]) AND ${seqAboveFloor(db)}`,
    db<{ doc: DeliveryJob }[]>`
      SELECT doc FROM jobs WHERE message_id = ANY(${ids}::text[]) ${domain === undefined ? db`` : db`AND domain = ${domain}`}
      ORDER BY message_id, id`,
    unfinishedAmong(db, ids),
  ]);
  const jobsOf = new Map<string, DeliveryJob[]>();
  for (const { doc } of jobs) jobsOf.set(doc.messageId, [...(jobsOf.get(doc.messageId) ?? []), doc]);
  for (const { doc: accepted } of events) {
    const open = jobsOf.get(accepted.messageId);
    if (open) out.set(accepted.seq, { seq: accepted.seq, accepted, jobs: open, preparing: preparing.has(accepted.messageId) });
  }
  return out;
}
