/**
 * Received messages (issue 33): the raw bytes and envelope the inbound listener commits for a
 * routed recipient before its 250, and their processing after it: verification, the POSTs to the
 * route's URL with their answers, and the status `received | posted | failed`.
 *
 * Part of the store port (store/port/index.ts): asynchronous verbs that take and return plain
 * data. Implemented by the LMDB engine (store/lmdb/inbound-messages.ts) and the PostgreSQL engine
 * (store/postgres/repos/inbound-messages.ts), checked by
 * test/store-contract/inbound-messages.contract.test.ts.
 *
 * The record is its own durable outbox: a message is due while `received` (nextAttemptAt), a
 * claim holds it for a lease (moving its due time past the lease and raising its lease number),
 * so a message claimed by a process that crashed is due again once the lease ran out, and an
 * attempt recorded under an old lease changes nothing. A claim names its node (the owner, as a
 * delivery lease does), so that node's next start gives its claims back at once (releaseClaims)
 * rather than after the lease; another node's claims are left to their lease.
 */
import type { AuthVerdicts } from '../../domain/auth-verdicts.js';
import type { InboundAttemptEnd, InboundMessage, InboundMessageStatus, InboundPostAttempt, NewInboundMessage } from '../../domain/inbound-message.js';

export interface InboundCommit {
  receivedAt: Date;
  raw: Buffer;
  /** One per route the recipients matched; all commit together, each with its own copy of raw. */
  messages: NewInboundMessage[];
}

/** A place in the list's order (newest first: receivedAt, then id, both descending). */
export interface InboundCursor {
  receivedAtMs: number;
  id: string;
}

export interface InboundMessageFilter {
  accountId: string;
  routeId?: string;
  /** Only messages of one of these channels (channel keys: their own). */
  channelIds?: string[];
  status?: InboundMessageStatus;
  /** A case-insensitive part of the header From's address. */
  from?: string;
  /** A case-insensitive part of the Subject. */
  subject?: string;
  /** receivedAt ≥ startMs and < endMs. */
  startMs?: number;
  endMs?: number;
  limit: number;
  /** Continue strictly after this place (the `next` of the previous page). */
  after?: InboundCursor;
}

/** A due message handed to processing, with the lease its writes must carry. */
export interface InboundClaim {
  message: InboundMessage;
  lease: number;
}

export interface InboundClaimRequest {
  /** The node claiming (its id stays the same across its restarts): the claims' owner. */
  owner: string;
  nowMs: number;
  max: number;
  /** How long the claim holds the message: it is due again after nowMs + leaseMs unless an attempt is recorded. */
  leaseMs: number;
}

export interface InboundAttemptRecord {
  id: string;
  lease: number;
  attempt: InboundPostAttempt;
  end: InboundAttemptEnd;
}

/** Received messages counted per UTC day (days since 1970-01-01), [fromDay, toDay]. */
export interface ReceivedPerDayQuery {
  accountId: string;
  /** Only these channels' messages; absent: the whole account's. */
  channelIds?: string[];
  fromDay: number;
  toDay: number;
}

/** recorded: written; stale: the message is gone, no longer `received`, or claimed again since. */
export type InboundWriteOutcome = 'recorded' | 'stale';

export interface InboundMessagesPort {
  /**
   * Commits every routed copy with its raw bytes, durably, in one commit: the listener answers
   * 250 after this. A copy whose channel was deleted since RCPT is left out (the channel's data
   * goes with it, and its purge may be over); the copies made are answered.
   */
  commit(c: InboundCommit): Promise<InboundMessage[]>;

  get(id: string): Promise<InboundMessage | undefined>;

  /**
   * The message as received (message/rfc822); undefined when gone. A Buffer of its own on every
   * call, which the caller may hand to a worker thread (transfer its memory) without harm to
   * anyone else's copy.
   */
  raw(id: string): Promise<Buffer | undefined>;

  /** One page of an account's messages, newest first, and the cursor of the next page (null after the last). */
  list(f: InboundMessageFilter): Promise<{ results: InboundMessage[]; next: InboundCursor | null }>;

  /**
   * Claims up to `max` messages due at nowMs (oldest due first), each under a new lease, and
   * says when the earliest message left is due. Atomic per message (LMDB's single writer; a row
   * lock taken with SKIP LOCKED elsewhere): concurrent claimers never get the same message.
   */
  claimDue(r: InboundClaimRequest): Promise<{ claims: InboundClaim[]; nextDueMs: number | undefined }>;

  /**
   * A node's start: every claim `owner` still holds (its previous process died, or was stopped
   * in the middle of a POST) ends, the message due at nowMs with its lease number raised (an
   * attempt under the old claim is stale). Claims of other owners stay. Answers how many.
   */
  releaseClaims(o: { owner: string; nowMs: number }): Promise<number>;

  /** Keeps the verdicts verification found, once per message, while the lease holds. */
  markProcessed(id: string, lease: number, auth: AuthVerdicts): Promise<InboundWriteOutcome>;

  /** Appends an attempt and applies its end (posted, retry at, failed), while the lease holds; the claim ends with it. */
  recordAttempt(r: InboundAttemptRecord): Promise<InboundWriteOutcome>;

  /**
   * POST /inbound/messages/{id}/retry: a `failed` or `posted` message becomes `received` and due
   * at nowMs (its attempts kept; a `received` one stays as it is); undefined when it does not exist.
   */
  requeue(id: string, nowMs: number): Promise<InboundMessage | undefined>;

  /**
   * Statistics: the routed copies committed on each UTC day of [fromDay, toDay] (zeros included,
   * oldest first), counted per account, channel and day in the commit itself. Like the statistics
   * counters, the counts stay when retention removes the messages.
   */
  receivedPerDay(q: ReceivedPerDayQuery): Promise<{ day: number; received: number }[]>;
}
