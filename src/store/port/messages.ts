/**
 * Accepted messages and their bodies: the submission commit, the send quota, client Message-ID
 * lookups and the finishing stage (compose and sign after the commit).
 *
 * The submission commit is one verb: the messages, their bodies, their delivery jobs (or the
 * sandbox's simulated outcomes), their events, the pending account's send quota, the idempotency
 * record and a broadcast's progress all commit together or not at all, and the verb resolves
 * once they are durable: only then does the API answer 200 or SMTP 250 (DESIGN.md, Promises).
 *
 * A message to compose or DKIM-sign is committed with a waiting entry and jobs that are not yet
 * due; the finishing stage (submission/finishing.ts) reads the entry, composes and signs in the
 * worker pool, and storeFinished() stores the body and makes the jobs due in one write. The entry
 * goes only then, so a crash in between loses nothing: the step is run again from what was
 * committed.
 *
 * Part of the store port (store/port/index.ts): asynchronous verbs that take and return plain
 * data; what must commit together is one verb. Implemented by the LMDB engine in
 * store/lmdb/repos/ and checked by the contract suite in test/store-contract/.
 */
import type { SchedulePort } from './schedule.js';
import type { MessageRecord } from '../../domain/types.js';
import type { BroadcastProgress } from './broadcasts.js';
import type { IdempotencyWrite } from './idempotency.js';

export interface AcceptedMessage {
  record: Omit<MessageRecord, 'openJobs' | 'status'>;
  /** The message as it is sent (before the signature); absent when `compose` is given. */
  body?: Uint8Array;
  /**
   * The normalized request the message is composed from after the commit (submission/finishing.ts),
   * kept in the waiting entry until the finished body replaces it. Opaque to the store.
   */
  compose?: unknown;
  /**
   * The DKIM d= domain to sign for after the commit (its key is looked up when signing); the
   * body is then stored unsigned and the jobs wait for the signature. Absent: sent as it is.
   */
  signingDomain?: string;
  /** Sandbox channels: recipients whose outcome is simulated as bounced (the rest as delivered). */
  simulatedBounces?: string[];
}

/** A pending account's free quota: the recipients it may ever send to, in total. */
export interface SendQuota {
  accountId: string;
  limit: number;
}

/** Everything one submission commits at once (MessagesPort.commit). */
export interface SubmissionCommit {
  messages: AcceptedMessage[];
  /** Pending accounts: the messages' recipients are counted against the quota in the same write. */
  sendLimit?: SendQuota;
  /** The request's idempotency record, stored with its effect. */
  idempotency?: IdempotencyWrite;
  /** A broadcast's expansion: the batch these messages are, recorded on the broadcast in the same write. */
  broadcastProgress?: BroadcastProgress;
  /** Background work (a broadcast's expansion): giveWay() does not wait for it. */
  background?: boolean;
  now?: Date;
}

/** Committed with its jobs not yet due: the finishing stage composes and/or signs it first. */
export function awaitsFinishing(m: AcceptedMessage): boolean {
  return m.signingDomain !== undefined || m.compose !== undefined;
}

/**
 * A message's failed finishing tries since its last success (submission/finishing-failures.ts),
 * kept with its waiting entry so the count survives a restart.
 */
export interface FinishingTries {
  tries: number;
  /** Tries in a row that failed for the input with the same message (`last`). */
  same: number;
  last?: string;
  /** The catalogue code of the first failure since the last success. */
  code?: string;
}

/** A message waiting for the finishing stage, as unfinished() returns it. */
export interface UnfinishedMessage {
  accountId: string;
  /** The d= domain whose current key signs it (absent: sent unsigned). */
  domain?: string;
  /** The request to compose the message from (absent: the committed body is the message). */
  compose?: unknown;
  failures?: FinishingTries;
  committedMs?: number;
  /** The committed body (an SMTP submission); undefined for a request not composed yet. */
  body: Buffer | undefined;
  /** The message went (channel deleted or purged, retention) before it was finished. */
  gone: boolean;
}

/** What composition learned that the record shows (message details): the rendered parts and the size. */
export type ComposedFields = Partial<Pick<MessageRecord, 'html' | 'text' | 'size'>>;

/** A finished message; an empty body only ends the wait of a message that is gone. */
export interface FinishedMessage {
  messageId: string;
  body: Uint8Array;
  /** Composed from a committed request (else: the committed body, signed). */
  composed?: boolean;
  record?: ComposedFields;
}

/** Why a message could not be finished: said in its bounced events. */
export interface UnfinishedFailure {
  /** The error's message (no stack): what the bounced events' reason and response say after the prefix. */
  reason: string;
  /** message_too_large for a composed message over smtp.maxMessageSize, else other. */
  category: 'message_too_large' | 'other';
  /** RFC 3463: 5.3.4 message too big for system, 5.6.0 other media (content) error. */
  enhancedCode: '5.3.4' | '5.6.0';
}

/** A broadcast's message that ends unfinished becomes this failure row of its broadcast. */
export interface FailedEntry {
  /** The entry's index in the broadcast. */
  index: number;
  code: string;
  message: string;
}

/** With the scheduled sends' verbs (schedule.ts). */
export interface MessagesPort extends SchedulePort {
  /**
   * The submission commit, atomic and durable: every message with its body, jobs (not yet due
   * when it awaits finishing), events and client Message-ID entry; the send quota taken
   * (conditional update: throws send_limit_exceeded, writing nothing, when the recipients would
   * pass it); the idempotency record (throws conflict when the key holds another live record);
   * the broadcast's progress (throws BroadcastCanceled when it was canceled or its channel
   * deleted meanwhile, and an Error when its cursor is not at `from`). Resolves once durable.
   */
  commit(input: SubmissionCommit): Promise<void>;

  /**
   * A background writer (a broadcast's expansion) calls it before each commit: resolves once the
   * writes in flight other than background ones have committed, or after a short bound, so that
   * its write does not join the group commit of writes that requests wait on. An engine whose
   * commits are not grouped resolves at once.
   */
  giveWay(): Promise<void>;

  get(id: string): Promise<MessageRecord | undefined>;
  /** The stored body: the message as it is sent once finished. */
  body(id: string): Promise<Buffer | undefined>;
  /** The record and the body together, in one read (delivery loads both per attempt); undefined unless both exist. */
  withBody(id: string): Promise<{ message: MessageRecord; body: Buffer } | undefined>;
  /** How many message records the store holds. */
  count(): Promise<number>;
  /** Every message record, in id order: a full scan, for operators and checks. */
  all(): Promise<MessageRecord[]>;
  /** Ids of the account's messages whose client Message-ID is `header` (with or without brackets). */
  byClientMessageId(accountId: string, header: string): Promise<string[]>;

  // ---- the finishing stage ----

  /** Up to `limit` ids of messages waiting to be finished, in id order after `after`: a cursor over the backlog. */
  unfinishedAfter(after: string | undefined, limit: number): Promise<string[]>;
  /** How many messages wait to be finished (cheap: read per metrics scrape). */
  unfinishedCount(): Promise<number>;
  /** How long the oldest waiting message has waited since its commit, in ms; 0 when none waits. */
  oldestUnfinishedMs(nowMs: number): Promise<number>;
  /** Whether the message waits to be finished (an existence check). */
  isUnfinished(id: string): Promise<boolean>;
  /** What to finish; undefined when the message no longer waits. */
  unfinished(id: string): Promise<UnfinishedMessage | undefined>;
  /**
   * Stores finished bodies (and what composition learned into the record), ends their wait and
   * makes their queued jobs due, in one write. A message that no longer waits is skipped (a
   * retry that raced: stored once); one that is gone only loses its entry. Returns how many
   * jobs became due.
   */
  storeFinished(items: readonly FinishedMessage[]): Promise<number>;
  /** Records a failed try in the message's waiting entry; nothing when it no longer waits. */
  recordFinishingTries(id: string, tries: FinishingTries): Promise<void>;
  /**
   * Ends a message that cannot be finished, in one write: its entry goes, each queued job ends
   * with a permanent bounced event per recipient, the message is sent once no job is left.
   * `failedEntry` (a broadcast's message): once something bounced, the entry becomes that
   * failure row of its broadcast in the same write. Returns the recipients bounced; none when
   * the message no longer waits (finished or ended by a racing caller: exactly one ends it).
   */
  endUnfinished(q: { messageId: string; failure: UnfinishedFailure; failedEntry?: FailedEntry; now?: Date }): Promise<string[]>;
}
