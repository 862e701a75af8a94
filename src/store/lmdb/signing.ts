/**
 * Messages waiting for the finishing stage (the `unsigned` database, layout.ts): composition and
 * DKIM signature after the commit. A message is committed with its entry here and its jobs
 * outside jobsDue (messages.ts); an API send is committed as its normalized request (the entry's
 * `compose`, no body yet), an SMTP submission as the raw message to sign (`bodies`). The
 * finishing stage (submission/finishing.ts) composes and signs in the worker pool and stores the
 * result with storeSignedBodies, which puts the jobs in jobsDue in the same transaction. The
 * entry goes only then, so whatever happens in between (a crash, a stop, a failed task), the
 * step is simply run again from what was committed.
 */
import type { ComposedFields, FailedEntry, FinishedMessage, FinishingTries, UnfinishedFailure, UnfinishedMessage } from '../port/messages.js';
import { failComposedEntryInTxn } from './broadcasts.js';
import { deletedChannels, isChannelDeleted } from './channel-records.js';
import { dbsOf } from './databases.js';
import type { Encoded, Store } from './env.js';
import { encodedEach, readBytes } from './bytes-in-turns.js';
import { jobsOfMessage } from './message-jobs.js';
import { pageAfter } from './page-after.js';
import { dueMs, putDueInTxn } from './queue.js';
import { closeJobOfMessageInTxn, eventFactory } from './queue-outcome.js';
import { recordSimulationInTxn } from './sandbox-outcomes.js';
import { finishedSimulation } from '../../domain/sandbox-outcome.js';
import type { DeliveryJob, MessageRecord } from '../../domain/types.js';

/**
 * What is left to do: the message's account, the d= domain whose current key signs it (absent:
 * sent unsigned), and the request to compose the message from (absent: the committed body is the
 * message). The request is the submission's own data (submission/finishing.ts); the store keeps
 * it as it was given.
 */
export interface PendingSignature {
  accountId: string;
  domain?: string;
  compose?: unknown;
  /** The failed tries so far (absent in entries written before it was kept, and before any failure: none). */
  failures?: FinishingTries;
  /**
   * The commit time (the record's createdAt, in ms): the entry's key in `unsignedByAge`. Absent only
   * in entries written before that index until indexPendingSignatures gives them one.
   */
  committedMs?: number;
  /**
   * The message's channel, so the finishing stage's look at the entry needs no decode of the
   * message record (unsignedMessage). Absent in entries written before it was kept: the record says.
   */
  channelId?: string;
}

export type { ComposedFields, FinishedMessage, FinishingTries, UnfinishedFailure };

/**
 * Records a failed try in the message's entry (one write; the entry is read and put back whole).
 * Nothing when the entry went meanwhile (finished by a try that raced, or ended).
 */
export async function recordFinishingTries(store: Store, messageId: string, failures: FinishingTries): Promise<void> {
  await store.write(() => {
    const unsigned = dbsOf(store).unsigned;
    const p = unsigned.get(messageId) as PendingSignature | undefined;
    if (p) unsigned.put(messageId, { ...p, failures } satisfies PendingSignature);
  });
}

/**
 * Inside commitMessages' write: the message is to be finished after the commit. Its entry and
 * its place in the age index (one more put, no read): the oldest waiting is one seek.
 */
export function putPendingSignatureInTxn(store: Store, messageId: string, p: PendingSignature & { committedMs: number }): void {
  const dbs = dbsOf(store);
  dbs.unsigned.put(messageId, p);
  dbs.unsignedByAge.put([p.committedMs, messageId], 1);
}

/**
 * The one way an entry leaves `unsigned`: with its age index entry. The index key's time is the
 * record's createdAt when the caller read the record anyway (no decoding of the entry, which
 * may hold a whole request with its attachments); without the record (the message went: channel
 * purge, retention) the entry's own committedMs.
 */
function removePendingSignatureInTxn(store: Store, messageId: string, record: MessageRecord | undefined): void {
  const dbs = dbsOf(store);
  const committedMs = record ? Date.parse(record.createdAt) : (dbs.unsigned.get(messageId) as PendingSignature | undefined)?.committedMs;
  dbs.unsigned.remove(messageId);
  if (committedMs !== undefined) dbs.unsignedByAge.remove([committedMs, messageId]);
}

/** Meta key: every `unsigned` entry has its committedMs and its `unsignedByAge` entry. */
const AGE_INDEXED = 'unsignedByAgeIndexed';

/**
 * Once per data folder, at start: entries written before the age index get their committedMs
 * and their index entry, a page per write so no write holds the store long. Returns how many
 * were indexed. An entry whose message went meanwhile (no createdAt left) counts as committed
 * now: it leaves at the finishing stage's next look anyway.
 */
export async function indexPendingSignatures(store: Store, pageSize = 1_000): Promise<number> {
  if (dbsOf(store).meta.get(AGE_INDEXED)) return 0;
  let indexed = 0;
  let after: string | undefined;
  for (;;) {
    const page = await store.write(() => indexPageInTxn(store, after, pageSize, Date.now()));
    indexed += page.indexed;
    if (page.last === undefined) break;
    after = page.last;
  }
  await store.write(() => dbsOf(store).meta.put(AGE_INDEXED, true));
  return indexed;
}

/** One page of indexPendingSignatures, after key `after`; `last` is absent once the walk is through. */
function indexPageInTxn(store: Store, after: string | undefined, limit: number, now: number): { indexed: number; last?: string } {
  const dbs = dbsOf(store);
  // Read whole before any write, so no cursor walks what this page rewrites.
  const page = pageAfter(after, limit, (range) => dbs.unsigned.getRange(range), ({ key }) => String(key));
  let indexed = 0;
  for (const { key, value } of page) {
    const id = String(key);
    let p = value as PendingSignature;
    if (p.committedMs === undefined) {
      const m = dbs.messages.get(id) as MessageRecord | undefined;
      p = { ...p, committedMs: m ? Date.parse(m.createdAt) : now };
      dbs.unsigned.put(id, p);
    }
    if (dbs.unsignedByAge.doesExist([p.committedMs, id])) continue;
    dbs.unsignedByAge.put([p.committedMs, id], 1);
    indexed++;
  }
  return { indexed, last: page.length < limit ? undefined : String(page[page.length - 1]!.key) };
}

/**
 * Up to `limit` messages waiting to be finished, in key order after `after` (absent: from the
 * first): a cursor, so the finishing stage walks a backlog (a stop or crash left, or more than it
 * keeps in memory) a page at a time instead of loading every id at once.
 */
export function pendingSignaturesAfter(store: Store, after: string | undefined, limit: number): string[] {
  return pageAfter(after, limit, (range) => dbsOf(store).unsigned.getKeys(range), (k) => String(k)).map(String);
}

/** How many messages wait to be finished (the database's entry count: O(1), read per metrics scrape). */
export function awaitingSignatureCount(store: Store): number {
  return (dbsOf(store).unsigned.getStats() as { entryCount: number }).entryCount;
}

/**
 * How long the oldest message waiting to be finished has waited since its commit (its record's
 * createdAt), in ms; 0 when none waits. The finishing stage has no backpressure (its backlog is
 * on disk, paged), so a backlog shows as late delivery: this is the operator's signal for it.
 * One seek: the first key of the age index (`unsignedByAge`, ordered by commit time), however
 * large the backlog.
 */
export function oldestAwaitingSignatureMs(store: Store, now: number): number {
  for (const k of dbsOf(store).unsignedByAge.getKeys({ limit: 1 })) return Math.max(0, now - (k as [number, string])[0]);
  return 0;
}

/**
 * What to finish: the entry and the committed body (SMTP); undefined when the message no longer
 * waits. `gone`: the message went (channel purge, retention) before it was finished, or its
 * channel was deleted (nothing is composed or signed for it from the DELETE's 204 on, whatever
 * the purge has reached).
 */
export async function unsignedMessage(store: Store, messageId: string): Promise<UnfinishedMessage | undefined> {
  const dbs = dbsOf(store);
  const p = dbs.unsigned.get(messageId) as PendingSignature | undefined;
  if (!p) return undefined;
  // A committed request has no body yet. The entry says the channel (older ones: the record).
  // A body over a MiB is read a part per turn, the checks below in the turn it ends in.
  const body = p.compose === undefined ? await readBytes(store, dbs.bodies, messageId) : undefined;
  const channelId = p.channelId ?? (dbs.messages.get(messageId) as MessageRecord | undefined)?.channelId;
  const gone = channelId === undefined || !dbs.messages.doesExist(messageId) || isChannelDeleted(store, channelId) || (p.compose === undefined && body === undefined);
  const { channelId: _channel, ...entry } = p;
  return { ...entry, body, gone };
}

/**
 * Stores finished bodies (and what composition learned into the record), ends their wait and
 * makes their messages' queued jobs due (their dueAt is the commit time, so they are due at
 * once), or records its simulated outcome (a sandbox message sent now: it has no jobs), all in
 * one write. A message that is gone (its channel deleted or purged) only loses its
 * entry; a job canceled meanwhile (a broadcast's cancel) stays done; a message finished twice (a
 * retry that raced) is stored once. Returns how many jobs became due.
 */
export async function storeSignedBodies(store: Store, signed: readonly FinishedMessage[]): Promise<number> {
  const bodies = await encodedEach(signed, (s) => s.messageId, (s) => s.body);
  return store.write(() => {
    let released = 0;
    // A batch's messages come from few channels: each channel's record is read once.
    const deleted = deletedChannels(store);
    for (const s of signed) released += storeSignedInTxn(store, s, deleted, bodies.get(s.messageId));
    return released;
  });
}

function storeSignedInTxn(store: Store, s: FinishedMessage, deleted: (channelId: string) => boolean, encodedBody: Encoded | undefined): number {
  const dbs = dbsOf(store);
  // Existence checks decode nothing (the entry may hold a whole request with its attachments).
  if (!dbs.unsigned.doesExist(s.messageId)) return 0;
  // The record is read once: for the age index's key and for what composition learned.
  const record = dbs.messages.get(s.messageId) as MessageRecord | undefined;
  removePendingSignatureInTxn(store, s.messageId, record);
  // Signed while its channel was being deleted: nothing is stored, no job becomes due.
  if (!record || deleted(record.channelId)) return 0;
  if (!s.composed && !dbs.bodies.doesExist(s.messageId)) return 0;
  dbs.bodies.put(s.messageId, encodedBody ?? Buffer.from(s.body.buffer, s.body.byteOffset, s.body.byteLength));
  if (s.record) dbs.messages.put(s.messageId, { ...record, ...s.record });
  if (record.simulateWhenFinished !== undefined) simulateFinishedInTxn(store, { ...record, ...s.record });
  let released = 0;
  for (const job of jobsOfMessage(store, s.messageId)) {
    if (job.state !== 'queued') continue;
    putDueInTxn(store, job);
    released++;
  }
  return released;
}

/**
 * A sandbox message sent now, finished: its simulated outcome is recorded now, not at its commit
 * (domain/sandbox-outcome.ts), and the record no longer waits for it: it is finished now.
 */
function simulateFinishedInTxn(store: Store, record: MessageRecord): void {
  const finishedAt = new Date().toISOString();
  const { events, suppress } = finishedSimulation(record, finishedAt);
  recordSimulationInTxn(store, record, events, suppress);
  const { simulateWhenFinished: _done, ...rest } = record;
  dbsOf(store).messages.put(record.id, { ...rest, finishedAt });
}

/**
 * Whether the message was committed to be finished (composed, signed) and is not finished yet.
 * An existence check, no decode: the queue views ask it of each message they list.
 */
export function awaitsSignature(store: Store, messageId: string): boolean {
  return dbsOf(store).unsigned.doesExist(messageId);
}

/**
 * Ends a message that cannot be composed after its commit (the finishing stage gave up on an
 * error that comes back on every try): its entry here goes, each queued job ends (state done,
 * out of jobsDue) with a permanent `bounced` event per recipient that says why, and the message
 * is `sent` once no job is left, as a message whose every recipient bounced. One write. A
 * message without jobs (sandbox: its outcomes were simulated at the commit) gets the bounced
 * events only. No suppression is added: the recipient's address is not at fault (delivery's
 * hard bounces and sandbox's simulated ones add one; this is neither). Returns the recipients
 * bounced; none when the message no longer waits (finished or ended meanwhile). `failedEntry`
 * (a broadcast's message): once something bounced, its entry becomes that failure row in the
 * same write (store/broadcasts.ts failComposedEntryInTxn); with nothing bounced (a cancel took
 * the message out of the queue first) it counts as canceled, not failed.
 */
export async function endUnfinished(
  store: Store,
  messageId: string,
  failure: UnfinishedFailure,
  o: { now?: Date; failedEntry?: FailedEntry } = {},
): Promise<string[]> {
  const now = o.now ?? new Date();
  return store.write(() => {
    const dbs = dbsOf(store);
    if (!dbs.unsigned.doesExist(messageId)) return [];
    const message = dbs.messages.get(messageId) as MessageRecord | undefined;
    removePendingSignatureInTxn(store, messageId, message);
    // A deleted channel's message just stops waiting: no event is added for it.
    if (!message || isChannelDeleted(store, message.channelId)) return [];
    const jobs = jobsOfMessage(store, messageId);
    const bounced: string[] = [];
    for (const job of jobs) {
      if (job.state !== 'queued') continue;
      dbs.jobsDue.remove([dueMs(job), job.id]);
      dbs.jobs.put(job.id, { ...job, state: 'done' } satisfies DeliveryJob);
      bounceInTxn(store, message, job.recipients, failure, now);
      bounced.push(...job.recipients);
      // Read again: each close counts the record's open jobs down by one.
      closeJobOfMessageInTxn(store, dbs.messages.get(messageId) as MessageRecord, now.toISOString());
    }
    if (jobs.length === 0) {
      bounceInTxn(store, message, message.recipients, failure, now);
      bounced.push(...message.recipients);
    }
    if (bounced.length > 0 && o.failedEntry) failComposedEntryInTxn(store, message, o.failedEntry);
    return bounced;
  });
}

/** One bounced event per recipient, as delivery records a hard bounce (queue-outcome.ts), without its suppression. */
function bounceInTxn(store: Store, m: MessageRecord, recipients: readonly string[], f: UnfinishedFailure, now: Date): void {
  const response = `The message could not be composed: ${f.reason}`;
  const event = eventFactory(store, m, now.toISOString());
  // As the operator's drop: the reason is also the response (no remote server answered).
  for (const r of recipients) event('bounced', [r], { bounceType: 'hard', category: f.category, enhancedCode: f.enhancedCode, response, reason: response });
}
