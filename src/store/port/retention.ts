/**
 * The retention sweep of old events, bodies and records.
 *
 * Part of the store port (store/port/index.ts): asynchronous verbs that take and return plain
 * data; what must commit together is one verb. Implemented by the LMDB engine in
 * store/lmdb/repos/ and checked by the contract suite in test/store-contract/.
 */

/** One sweep batch: the cutoff, the batch size, and the oldest accepted event that may hold the floor (domain/retention-hold.ts). */
export interface SweepBatchOptions {
  cutoffMs: number;
  batch: number;
  /** An accepted event older than this holds nothing (holdsRetention; the sweeper passes it); absent: any may hold. */
  holdFromMs?: number;
}

export interface SweepResult {
  events: number;
  messages: number;
  /** Received messages (issue 33) that went, raw bytes included. */
  inboundMessages: number;
  /** The batch was full: call again. */
  more: boolean;
  /**
   * The batch stopped at the accepted event, older than the cutoff, of this message: not finished,
   * or finished less than retention.days ago (domain/retention-hold.ts). The floor waits for it.
   */
  heldBy?: string;
}

/** [accountId, recipient domain]: where a DNS-failure sweep goes on from. */
export type DnsFailureKey = [string, string];

export interface DnsFailureSweep {
  /** Entries removed: none of their failures was within the window any more. */
  removed: number;
  /** Where the next batch starts (after this key); absent when the sweep reached the end. */
  next?: DnsFailureKey;
}

export interface RetentionPort {
  /**
   * One short commit: up to `batch` of the oldest events older than cutoffMs leave the store,
   * from the low end of the log only (the kept events stay one contiguous run, so `after` paging
   * goes on working). A message goes with its accepted event (record, body, finished jobs).
   * Nothing of a message not finished goes (domain/retention-hold.ts): the batch stops at the
   * accepted event of one with an open job (scheduled, queued, retrying) or waiting to be
   * composed or signed, or whose last job ended at or after cutoffMs; the floor waits there.
   * In the same commit, up to `batch` received messages (issue 33) received before cutoffMs go
   * with their raw bytes, oldest first: only `posted` or `failed` ones, never one still
   * `received` (due for a POST within its window, or claimed); it goes once its processing ends.
   */
  sweepBatch(o: SweepBatchOptions): Promise<SweepResult>;
  /**
   * One short commit over at most `batch` DNS-failure entries after `after`, in key order:
   * failures older than their window go, and an entry left with none goes with them.
   */
  sweepDnsFailures(o: { nowMs: number; batch: number; after?: DnsFailureKey }): Promise<DnsFailureSweep>;
  /**
   * The message's accepted event is gone and the message waits for its delivery to end before it
   * goes too: parked by an older version's sweep (this one stops at such a message instead).
   */
  isPending(messageId: string): Promise<boolean>;
}
