/**
 * Broadcasts: the accepted request is stored durably (record + one row per entry) before the API
 * answers; the expander then turns entries into messages in batches, moving a cursor in the same
 * transaction as each batch's messages, so a crash resumes exactly after the last committed batch.
 */
import type { Store } from './env.js';
import { KEY_MAX } from './layout.js';
import { putIdempotencyInTxn, type IdempotencyRecord } from './idempotency.js';
import { reserveSendQuotaInTxn } from './messages.js';

export interface BroadcastRecord<Common = unknown> {
  id: string;
  accountId: string;
  channelId: string;
  createdAt: string;
  state: 'expanding' | 'done';
  total: number;
  /** Entries [0, cursor) have been turned into messages (or skipped). */
  cursor: number;
  messages: number;
  skipped: number;
  failures: { index: number; code: string; message: string }[];
  common: Common;
}

export async function acceptBroadcast<C, E>(
  store: Store,
  input: {
    record: BroadcastRecord<C>;
    entries: E[];
    sendLimit?: { accountId: string; limit: number; recipients: number };
    idempotency?: { accountId: string; key: string; record: IdempotencyRecord };
  },
): Promise<void> {
  await store.write(() => {
    if (input.sendLimit) reserveSendQuotaInTxn(store, input.sendLimit.accountId, input.sendLimit.recipients, input.sendLimit.limit);
    store.db.broadcasts.put(input.record.id, input.record);
    input.entries.forEach((e, i) => store.db.broadcastEntries.put([input.record.id, i], e));
    store.db.broadcastQueue.put([Date.parse(input.record.createdAt), input.record.id], 1);
    if (input.idempotency) putIdempotencyInTxn(store, input.idempotency.accountId, input.idempotency.key, input.idempotency.record);
  });
}

export function getBroadcast<C>(store: Store, id: string): BroadcastRecord<C> | undefined {
  return store.db.broadcasts.get(id) as BroadcastRecord<C> | undefined;
}

/** The oldest broadcast still being expanded. */
export function nextActiveBroadcast<C>(store: Store): BroadcastRecord<C> | undefined {
  for (const { key } of store.db.broadcastQueue.getRange({ limit: 1 })) {
    return getBroadcast<C>(store, (key as [number, string])[1]);
  }
  return undefined;
}

export function broadcastEntries<E>(store: Store, id: string, from: number, count: number): { index: number; entry: E }[] {
  return [...store.db.broadcastEntries.getRange({ start: [id, from], end: [id, KEY_MAX], limit: count })].map(({ key, value }) => ({
    index: (key as [string, number])[1],
    entry: value as E,
  }));
}

/** Inside a write: records progress; entries already expanded are deleted to free space. */
export function advanceBroadcastInTxn<C>(
  store: Store,
  b: BroadcastRecord<C>,
  progress: { cursor: number; messages: number; skipped: number; failures: BroadcastRecord['failures'] },
): BroadcastRecord<C> {
  for (let i = b.cursor; i < progress.cursor; i++) store.db.broadcastEntries.remove([b.id, i]);
  const next: BroadcastRecord<C> = {
    ...b,
    cursor: progress.cursor,
    messages: b.messages + progress.messages,
    skipped: b.skipped + progress.skipped,
    failures: [...b.failures, ...progress.failures].slice(0, 100),
    state: progress.cursor >= b.total ? 'done' : 'expanding',
  };
  store.db.broadcasts.put(b.id, next);
  if (next.state === 'done') store.db.broadcastQueue.remove([Date.parse(b.createdAt), b.id]);
  return next;
}
