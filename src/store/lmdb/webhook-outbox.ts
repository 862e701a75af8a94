/**
 * The webhook outbox: events waiting to be POSTed to webhooks, durable in LMDB.
 *
 * Entries are written by enqueueWebhookEventsInTxn, which appendEventInTxn calls, so an event
 * and its outbox entries commit together (no event is lost between the log and the outbox).
 * An entry stays until its endpoint accepted it or it was given up on, so a restart simply
 * sends again what was in flight (at-least-once; receivers dedupe by X-Service-Webhook-Id).
 *
 * Order per message: only the oldest entry of a (webhook, message) pair is in `webhookDue`;
 * finishing it (success or give-up) puts the next one there, in the same transaction.
 *
 * A leaf module of the store (it imports no other store verbs but the leaf channel-records.ts),
 * so webhooks.ts and events.ts can both use it without an import cycle.
 */
import type { EventRecord } from '../../domain/types.js';
import { EMPTY_STATUS, payloadsOf, webhookWants, type OutboxEntry, type Webhook, type WebhookStatus } from '../../domain/webhook.js';
import type { AttemptOutcome, AttemptRecord, Claim, ClaimRequest } from '../port/webhooks.js';
import { deletedChannels } from './channel-records.js';
import { cachesOf, dbsOf } from './databases.js';
import type { Store } from './env.js';
import { KEY_MAX } from './layout.js';
import { timeOrderedUuid } from '../../domain/uuid.js';

/**
 * [webhookId, messageId, seq] or, for an entry split per recipient, [webhookId, messageId, seq,
 * part]: both sort in event order within a message, so older 3-element entries stay valid.
 */
type OutboxKey = [string, string, number] | [string, string, number, number];
type DueKey = [string, number, string, number] | [string, number, string, number, number];

function outboxKey(e: Pick<OutboxEntry, 'webhookId' | 'messageId' | 'seq' | 'part'>): OutboxKey {
  return e.part === undefined ? [e.webhookId, e.messageId, e.seq] : [e.webhookId, e.messageId, e.seq, e.part];
}

// ---------- writing entries ----------

function isHeadInTxn(store: Store, e: OutboxEntry): boolean {
  for (const { key } of dbsOf(store).webhookOutbox.getRange({ start: [e.webhookId, e.messageId], end: [e.webhookId, e.messageId, KEY_MAX], limit: 1 })) {
    const k = key as OutboxKey;
    return k[2] === e.seq && k[3] === e.part;
  }
  return false;
}

/**
 * Accounts known to have no webhook at all, so their events skip the accountWebhooks range (two
 * per send, a cursor each). Only "none" is remembered: adding a webhook is the one change that
 * makes it wrong, and createWebhook forgets the account inside its write (the store has one
 * writer, this thread). A failed commit may have undone a webhook deletion that a later event of
 * the same batch saw, so the set starts afresh after one (Store.failedCommits). Kept in the
 * store's ReadCaches, so a reopened store starts empty.
 */
const NO_WEBHOOKS_MAX = 100_000;

function accountsWithoutWebhooks(store: Store): Set<string> {
  const caches = cachesOf(store);
  let known = caches.noWebhooks;
  if (known.failedCommits !== store.failedCommits) caches.noWebhooks = known = { failedCommits: store.failedCommits, accounts: new Set() };
  if (known.accounts.size >= NO_WEBHOOKS_MAX) known.accounts.clear();
  return known.accounts;
}

/** Inside the write that adds a webhook to the account: its events look for webhooks again. */
export function forgetNoWebhooksInTxn(store: Store, accountId: string): void {
  cachesOf(store).noWebhooks.accounts.delete(accountId);
}

/**
 * Inside the event's write: outbox entries for every enabled webhook of the account that wants
 * this event (channel filter, event type), one per payload (payloadsOf). Free when the account
 * is known to have no webhooks; else one range, empty when it has none.
 */
export function enqueueWebhookEventsInTxn(store: Store, e: EventRecord): void {
  const none = accountsWithoutWebhooks(store);
  if (none.has(e.accountId)) return;
  const db = dbsOf(store);
  let added = 0;
  let webhooks = 0;
  for (const { key } of db.accountWebhooks.getRange({ start: [e.accountId], end: [e.accountId, KEY_MAX] })) {
    webhooks++;
    const w = db.webhooks.get((key as [string, number, string])[2]) as Webhook | undefined;
    if (!w || !webhookWants(w, e)) continue;
    const now = Date.now();
    for (const { part, payload } of payloadsOf(e)) {
      const entry: OutboxEntry = { id: timeOrderedUuid(), webhookId: w.id, messageId: e.messageId, seq: e.seq, part, createdAtMs: now, dueAtMs: now, attempts: 0, payload };
      if (part === undefined) delete entry.part;
      db.webhookOutbox.put(outboxKey(entry), entry);
      if (isHeadInTxn(store, entry)) db.webhookDue.put(dueKey(entry), 1);
      added++;
    }
  }
  if (webhooks === 0) none.add(e.accountId);
  // The store's OutboxSignal (store/outbox-signal.ts), wired to the dispatcher in daemon.ts.
  if (added > 0) store.outbox.notify();
}

function dueKey(e: OutboxEntry): DueKey {
  return e.part === undefined ? [e.webhookId, e.dueAtMs, e.messageId, e.seq] : [e.webhookId, e.dueAtMs, e.messageId, e.seq, e.part];
}

export function outboxKeyOf(e: Pick<OutboxEntry, 'webhookId' | 'messageId' | 'seq' | 'part'>): string {
  return `${e.webhookId}/${e.messageId}/${e.seq}` + (e.part === undefined ? '' : `/${e.part}`);
}

// ---------- claiming due entries ----------

// Declared by the port now; re-exported for the callers not yet on it.
export type { AttemptOutcome, AttemptRecord, Claim, ClaimRequest };

/**
 * Claims due entries for WebhookOutboxPort.claimDue. `claimed` (outboxKeyOf) is the engine's set
 * of entries claimed and not yet given back (repos/webhook-outbox.ts): they are skipped, and
 * this write's claims join it inside the callback, before any later write's callback runs, so
 * two claimers never get the same entry. A failed commit gives this write's claims back.
 */
export async function claimDue(store: Store, claimed: Set<string>, r: ClaimRequest): Promise<{ claims: Claim[]; nextDueMs: number | undefined }> {
  const taken: string[] = [];
  try {
    return await store.write(() => {
      const result = claimDueInTxn(store, { ...r, claimed });
      for (const c of result.claims) taken.push(outboxKeyOf(c.entry));
      for (const key of taken) claimed.add(key);
      return result;
    });
  } catch (err) {
    for (const key of taken) claimed.delete(key);
    throw err;
  }
}

/**
 * Due entries to send now, per webhook up to its free slots, and the earliest due time of those
 * left for later (the dispatcher's next wake-up). Runs inside a write (see OutboxSignal); it
 * removes the entries of webhooks that were deleted or disabled meanwhile, and those about a
 * deleted channel (its tombstone committed before the DELETE's 204; an account-wide webhook's
 * entries would otherwise wait for the purge to reach their message): nothing is posted for it.
 */
function claimDueInTxn(store: Store, o: ClaimRequest & { claimed: ReadonlySet<string> }): { claims: Claim[]; nextDueMs: number | undefined } {
  const db = dbsOf(store);
  const claims: Claim[] = [];
  let nextDueMs: number | undefined;
  let start: [string, string] | undefined;
  const deleted = deletedChannels(store);
  // Skip-scan: one seek per webhook that has due entries.
  for (;;) {
    let webhookId: string | undefined;
    for (const { key } of db.webhookDue.getRange({ start, limit: 1 })) webhookId = (key as DueKey)[0];
    if (webhookId === undefined) break;
    start = [webhookId, KEY_MAX];
    const w = db.webhooks.get(webhookId) as Webhook | undefined;
    const secret = db.webhookSecrets.get(webhookId) as string | undefined;
    if (!w || !w.enabled || secret === undefined) {
      removeOutboxOfWebhookInTxn(store, webhookId);
      continue;
    }
    const slots = Object.hasOwn(o.freeSlots.byWebhook, webhookId) ? o.freeSlots.byWebhook[webhookId] : o.freeSlots.default;
    let free = Math.min(slots, o.max - claims.length);
    for (const { key } of db.webhookDue.getRange({ start: [webhookId], end: [webhookId, KEY_MAX] })) {
      const [, dueAtMs, messageId, seq, part] = key as DueKey;
      if (dueAtMs > o.nowMs) {
        nextDueMs = Math.min(nextDueMs ?? dueAtMs, dueAtMs);
        break;
      }
      if (free <= 0) break;
      if (o.claimed.has(outboxKeyOf({ webhookId, messageId, seq, part }))) continue;
      const entry = db.webhookOutbox.get(outboxKey({ webhookId, messageId, seq, part })) as OutboxEntry | undefined;
      if (!entry || deleted(entry.payload.channelId)) {
        db.webhookDue.remove(key); // stale index entry, or the head of a deleted channel's message
        if (entry) removeOutboxOfMessageInTxn(store, webhookId, messageId);
        continue;
      }
      claims.push({ webhook: w, secret, entry });
      free--;
    }
  }
  return { claims, nextDueMs };
}

// ---------- recording an attempt ----------

/**
 * One transaction per attempt: the entry is removed (success, give-up) or rescheduled, the next
 * entry of the same message becomes due, and the webhook's status is updated. An entry that is
 * gone already (webhook deleted or disabled meanwhile) changes nothing.
 */
export async function recordAttempt(store: Store, r: AttemptRecord): Promise<AttemptOutcome> {
  return store.write(() => {
    const db = dbsOf(store);
    const e = db.webhookOutbox.get(outboxKey(r.entry)) as OutboxEntry | undefined;
    if (!e || !db.webhooks.get(e.webhookId)) return 'gone';
    const ok = r.error === null;
    const status = { ...EMPTY_STATUS, ...(db.webhookStatus.get(e.webhookId) as WebhookStatus | undefined) };
    status.lastResponse = { statusCode: r.statusCode, error: r.error, at: new Date(r.atMs).toISOString() };
    // Kept with the status record this write puts anyway: the API's lastDelivery costs no extra write.
    status.lastEvent = e.payload.eventType;
    let outcome: 'done' | 'retry' | 'dropped';
    if (ok) {
      status.succeeded++;
      status.consecutiveFailures = 0;
      finishEntryInTxn(store, e);
      outcome = 'done';
    } else {
      status.failedAttempts++;
      status.consecutiveFailures++;
      if (r.retryAtMs === undefined) {
        status.failed++;
        finishEntryInTxn(store, e);
        outcome = 'dropped';
      } else {
        db.webhookDue.remove(dueKey(e));
        const next: OutboxEntry = { ...e, attempts: e.attempts + 1, dueAtMs: r.retryAtMs };
        db.webhookOutbox.put(outboxKey(next), next);
        db.webhookDue.put(dueKey(next), 1);
        outcome = 'retry';
      }
    }
    db.webhookStatus.put(e.webhookId, status);
    return outcome;
  });
}

/** Removes an entry and makes the next entry of its message due. */
function finishEntryInTxn(store: Store, e: OutboxEntry): void {
  const db = dbsOf(store);
  db.webhookDue.remove(dueKey(e));
  db.webhookOutbox.remove(outboxKey(e));
  for (const { value } of db.webhookOutbox.getRange({ start: [e.webhookId, e.messageId], end: [e.webhookId, e.messageId, KEY_MAX], limit: 1 })) {
    db.webhookDue.put(dueKey(value as OutboxEntry), 1);
  }
}

// ---------- reading and removing ----------

/** Entries waiting for one webhook (in flight included). */
export function pendingCount(store: Store, webhookId: string): number {
  return dbsOf(store).webhookOutbox.getKeysCount({ start: [webhookId], end: [webhookId, KEY_MAX] });
}

/** Inside a write: drops everything queued for a webhook (deleted or disabled). */
/**
 * Inside a write: a message's entries for one webhook, none posted (its channel was deleted).
 * Only the head of a (webhook, message) pair has a due entry: the caller removes it.
 */
function removeOutboxOfMessageInTxn(store: Store, webhookId: string, messageId: string): void {
  const db = dbsOf(store);
  for (const key of [...db.webhookOutbox.getKeys({ start: [webhookId, messageId], end: [webhookId, messageId, KEY_MAX] })]) db.webhookOutbox.remove(key);
}

export function removeOutboxOfWebhookInTxn(store: Store, webhookId: string): number {
  const db = dbsOf(store);
  let n = 0;
  for (const key of db.webhookOutbox.getKeys({ start: [webhookId], end: [webhookId, KEY_MAX] })) {
    db.webhookOutbox.remove(key);
    n++;
  }
  for (const key of db.webhookDue.getKeys({ start: [webhookId], end: [webhookId, KEY_MAX] })) db.webhookDue.remove(key);
  return n;
}
