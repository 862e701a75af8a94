/**
 * Store verbs for received messages (store/port/inbound-messages.ts). The record is in
 * inboundMessages with its claim's lease, the raw bytes apart in inboundRaw (reading a record
 * never loads them), and inboundMessageIndex holds the account's list and the due order
 * (layout.ts). Every check-then-write is inside one store.write: LMDB's single writer makes
 * claims and lease checks atomic.
 */
import type { AuthVerdicts } from '../../domain/auth-verdicts.js';
import { utcDay } from '../../domain/stat-counters.js';
import { afterAttempt, matchesText, receivedMessage, type InboundMessage } from '../../domain/inbound-message.js';
import type {
  InboundAttemptRecord,
  InboundClaim,
  InboundClaimRequest,
  InboundCommit,
  InboundCursor,
  InboundMessageFilter,
  InboundWriteOutcome,
  ReceivedPerDayQuery,
} from '../port/inbound-messages.js';
import { encodedInTurns, readBytes } from './bytes-in-turns.js';
import { isChannelDeleted } from './channel-records.js';
import { dbsOf } from './databases.js';
import type { Store } from './env.js';
import { KEY_MAX } from './layout.js';
import { hiddenChannels } from './purge-queue.js';
import { timeOrderedUuid } from '../../domain/uuid.js';

/** The record as kept: the message, the number of its latest claim and, while that claim holds, its node. */
interface StoredInbound {
  message: InboundMessage;
  lease: number;
  /** The node that claimed it, until an attempt under the claim ends it (or the node's start releases it). */
  owner?: string;
}

type DueKey = ['d', number, string];
type FinishedKey = ['f', number, string];
type CountKey = ['n', string, number, string];
type ClaimKey = ['c', string, string];

function stored(store: Store, id: string): StoredInbound | undefined {
  return dbsOf(store).inboundMessages.get(id) as StoredInbound | undefined;
}

function dueKey(m: InboundMessage): DueKey | null {
  return m.nextAttemptAt === null ? null : ['d', Date.parse(m.nextAttemptAt), m.id];
}

/** The retention entry: only a message whose processing ended (posted or failed) has one. */
function finishedKey(m: InboundMessage): FinishedKey {
  return ['f', Date.parse(m.receivedAt), m.id];
}

/** Writes the record and moves its due, retention and claim entries from what `before` had to what `next` has. */
function putInTxn(store: Store, before: StoredInbound | null, next: StoredInbound): void {
  const dbs = dbsOf(store);
  const old = before && dueKey(before.message);
  if (old) dbs.inboundMessageIndex.remove(old);
  const due = dueKey(next.message);
  if (due) dbs.inboundMessageIndex.put(due, 1);
  if (next.message.status !== 'received') dbs.inboundMessageIndex.put(finishedKey(next.message), 1);
  else if (before && before.message.status !== 'received') dbs.inboundMessageIndex.remove(finishedKey(before.message));
  if (before?.owner !== undefined && before.owner !== next.owner) dbs.inboundMessageIndex.remove(claimKey(before.owner, before.message.id));
  if (next.owner !== undefined) dbs.inboundMessageIndex.put(claimKey(next.owner, next.message.id), 1);
  dbs.inboundMessages.put(next.message.id, next);
}

function claimKey(owner: string, id: string): ClaimKey {
  return ['c', owner, id];
}

/**
 * Every copy whose channel is not deleted, in one write. A channel deleted since RCPT takes its
 * copy with it: the channel's purge, which may already be over, would never find a copy written
 * afterwards. (A route deleted on its own still gets its copy, which ends `failed`, route deleted.)
 */
export async function commitInbound(store: Store, c: InboundCommit): Promise<InboundMessage[]> {
  const copies = c.messages.map((n) => receivedMessage(n, { id: timeOrderedUuid(), receivedAt: c.receivedAt, size: c.raw.length }));
  const raw = (await encodedInTurns(c.raw)) ?? c.raw;
  return store.write(() => {
    const dbs = dbsOf(store);
    const made = copies.filter((m) => !isChannelDeleted(store, m.channelId));
    for (const m of made) {
      putInTxn(store, null, { message: m, lease: 0 });
      dbs.inboundMessageIndex.put(['a', m.accountId, c.receivedAt.getTime(), m.id], 1);
      dbs.inboundRaw.put(m.id, raw);
      const counted: CountKey = ['n', m.accountId, utcDay(c.receivedAt.getTime()), m.channelId];
      dbs.inboundMessageIndex.put(counted, ((dbs.inboundMessageIndex.get(counted) as number | undefined) ?? 0) + 1);
    }
    return made;
  });
}

export function getInbound(store: Store, id: string): InboundMessage | undefined {
  return stored(store, id)?.message;
}

/** Up to inbound.maxMessageSize: over a MiB copied a part per turn (bytes-in-turns.ts), since the main thread reads it. */
export function getInboundRaw(store: Store, id: string): Promise<Buffer | undefined> {
  return readBytes(store, dbsOf(store).inboundRaw, id);
}

function passes(m: InboundMessage, f: InboundMessageFilter, channels: Set<string> | null): boolean {
  if (f.routeId !== undefined && m.routeId !== f.routeId) return false;
  if (channels && !channels.has(m.channelId)) return false;
  if (f.status !== undefined && m.status !== f.status) return false;
  return matchesText(m.from, f.from) && matchesText(m.subject, f.subject);
}

/** Walks the account's index backwards from the cursor (or endMs) down to startMs, filtering each record. */
export function listInbound(store: Store, f: InboundMessageFilter): { results: InboundMessage[]; next: InboundCursor | null } {
  const top = f.after ? ['a', f.accountId, f.after.receivedAtMs, f.after.id] : ['a', f.accountId, f.endMs ?? KEY_MAX];
  const bottom = f.startMs === undefined ? ['a', f.accountId] : ['a', f.accountId, f.startMs];
  const channels = f.channelIds ? new Set(f.channelIds) : null;
  const hidden = hiddenChannels(store, f.accountId);
  const results: InboundMessage[] = [];
  for (const key of dbsOf(store).inboundMessageIndex.getKeys({ start: top, end: bottom, reverse: true })) {
    const [, , , id] = key as ['a', string, number, string];
    if (f.after && id === f.after.id) continue;
    const m = getInbound(store, id);
    if (!m || hidden.has(m.channelId) || !passes(m, f, channels)) continue;
    if (results.length === f.limit) {
      const last = results[results.length - 1];
      return { results, next: { receivedAtMs: Date.parse(last.receivedAt), id: last.id } };
    }
    results.push(m);
  }
  return { results, next: null };
}

/** Due entries up to nowMs, oldest first, each moved past its lease with the lease number raised, claimed by r.owner. */
export async function claimDueInbound(store: Store, r: InboundClaimRequest): Promise<{ claims: InboundClaim[]; nextDueMs: number | undefined }> {
  return store.write(() => {
    const claims: InboundClaim[] = [];
    const until = new Date(r.nowMs + r.leaseMs).toISOString();
    const keys = [...dbsOf(store).inboundMessageIndex.getKeys({ start: ['d'], end: ['d', r.nowMs, KEY_MAX], limit: r.max })] as DueKey[];
    for (const [, , id] of keys) {
      const s = stored(store, id);
      if (!s) continue;
      const next = { message: { ...s.message, nextAttemptAt: until }, lease: s.lease + 1, owner: r.owner };
      putInTxn(store, s, next);
      claims.push({ message: s.message, lease: next.lease });
    }
    return { claims, nextDueMs: nextDue(store) };
  });
}

function nextDue(store: Store): number | undefined {
  for (const key of dbsOf(store).inboundMessageIndex.getKeys({ start: ['d'], end: ['d', KEY_MAX], limit: 1 })) return (key as DueKey)[1];
  return undefined;
}

/** Applies `change` to a `received` message still under `lease` (ending the claim when `ends`); stale otherwise. */
async function underLease(store: Store, id: string, lease: number, ends: boolean, change: (m: InboundMessage) => InboundMessage): Promise<InboundWriteOutcome> {
  return store.write(() => {
    const s = stored(store, id);
    if (!s || s.lease !== lease || s.message.status !== 'received') return 'stale';
    const message = change(s.message);
    putInTxn(store, s, ends ? { message, lease } : { ...s, message });
    return 'recorded';
  });
}

export function markInboundProcessed(store: Store, id: string, lease: number, auth: AuthVerdicts): Promise<InboundWriteOutcome> {
  return underLease(store, id, lease, false, (m) => ({ ...m, processedAt: new Date().toISOString(), auth }));
}

export function recordInboundAttempt(store: Store, r: InboundAttemptRecord): Promise<InboundWriteOutcome> {
  return underLease(store, r.id, r.lease, true, (m) => afterAttempt(m, r.attempt, r.end));
}

/**
 * The claims `owner` still holds (a node's start: its previous process died or was stopped
 * mid-POST) are due at nowMs, their lease number raised so a late writer of one is stale.
 * Answers how many.
 */
export async function releaseInboundClaims(store: Store, o: { owner: string; nowMs: number }): Promise<number> {
  return store.write(() => {
    const index = dbsOf(store).inboundMessageIndex;
    const keys = [...index.getKeys({ start: ['c', o.owner], end: ['c', o.owner, KEY_MAX] })] as ClaimKey[];
    let released = 0;
    for (const key of keys) {
      const s = stored(store, key[2]);
      if (!s || s.owner !== o.owner || s.message.status !== 'received') {
        index.remove(key);
        continue;
      }
      putInTxn(store, s, { message: { ...s.message, nextAttemptAt: new Date(o.nowMs).toISOString() }, lease: s.lease + 1 });
      released++;
    }
    return released;
  });
}

/** A finished message due again; the lease is raised so a late writer of an old claim is stale. */
export async function requeueInbound(store: Store, id: string, nowMs: number): Promise<InboundMessage | undefined> {
  return store.write(() => {
    const s = stored(store, id);
    if (!s || s.message.status === 'received') return s?.message;
    const message: InboundMessage = { ...s.message, status: 'received', nextAttemptAt: new Date(nowMs).toISOString() };
    putInTxn(store, s, { message, lease: s.lease + 1 });
    return message;
  });
}

/**
 * Retention (inside the sweep's write, store/lmdb/retention.ts): up to `max` messages posted or
 * failed and received before cutoffMs go, oldest first, with their raw bytes and list entry. A
 * message still `received` has no retention entry, so it is never among them. Answers how many went.
 */
export function expireInboundInTxn(store: Store, cutoffMs: number, max: number): number {
  const dbs = dbsOf(store);
  const keys = [...dbs.inboundMessageIndex.getKeys({ start: ['f'], end: ['f', cutoffMs], limit: max })] as FinishedKey[];
  let removed = 0;
  for (const key of keys) {
    const m = getInbound(store, key[2]);
    dbs.inboundMessageIndex.remove(key);
    if (!m) continue;
    removeInboundInTxn(store, m);
    removed++;
  }
  return removed;
}

/** A received message with its raw bytes and every index entry it has (list, due, retention, claim). */
export function removeInboundInTxn(store: Store, m: InboundMessage): void {
  const dbs = dbsOf(store);
  const owner = stored(store, m.id)?.owner;
  if (owner !== undefined) dbs.inboundMessageIndex.remove(claimKey(owner, m.id));
  const due = dueKey(m);
  if (due) dbs.inboundMessageIndex.remove(due);
  dbs.inboundMessageIndex.remove(finishedKey(m));
  dbs.inboundMessageIndex.remove(['a', m.accountId, Date.parse(m.receivedAt), m.id]);
  dbs.inboundMessages.remove(m.id);
  dbs.inboundRaw.remove(m.id);
}

/** The day counters of the account in [fromDay, toDay], summed over the channels asked for. */
export function receivedPerDay(store: Store, q: ReceivedPerDayQuery): { day: number; received: number }[] {
  const channels = q.channelIds ? new Set(q.channelIds) : null;
  const hidden = hiddenChannels(store, q.accountId);
  const days = Array.from({ length: Math.max(0, q.toDay - q.fromDay + 1) }, (_, i) => ({ day: q.fromDay + i, received: 0 }));
  const range = { start: ['n', q.accountId, q.fromDay], end: ['n', q.accountId, q.toDay, KEY_MAX] };
  for (const { key, value } of dbsOf(store).inboundMessageIndex.getRange(range)) {
    const [, , day, channelId] = key as CountKey;
    if ((!channels || channels.has(channelId)) && !hidden.has(channelId)) days[day - q.fromDay].received += value as number;
  }
  return days;
}
