/**
 * Webhooks and the outbox of their deliveries.
 *
 * Part of the store port (store/port/index.ts): asynchronous verbs that take and return plain
 * data; what must commit together is one verb. Implemented by the LMDB engine in
 * store/lmdb/repos/ and checked by the contract suite in test/store-contract/.
 *
 * The outbox is filled by the events verbs themselves (an event and its outbox entries commit
 * together); an engine may cache "this account has no webhook" to skip that look-up, as long as
 * WebhooksPort.create invalidates it in the same commit as the webhook (another node's create
 * included).
 */
import type { EventType } from '../../domain/types.js';
import type { OutboxEntry, Webhook, WebhookHeader, WebhookStatus } from '../../domain/webhook.js';

/** A created webhook with its signing key (shown to the account, never logged). */
export interface NewWebhook {
  webhook: Webhook;
  signingKey: string;
}

/** What POST /webhooks stores, and the per-account limit (config.webhooks.maxPerAccount). */
export type NewWebhookInput = Omit<Webhook, 'id' | 'createdAt' | 'updatedAt'> & { maxPerAccount: number };

export interface WebhookFilter {
  accountId: string;
  /** Only webhooks bound to one of these channels (channel keys: their own). */
  channelIds?: string[];
  limit: number;
  offset: number;
}

export interface WebhookPatch {
  url?: string;
  events?: EventType[];
  channelId?: string | null;
  enabled?: boolean;
  additionalHeaders?: WebhookHeader[];
}

export interface WebhooksPort {
  /**
   * Creates a webhook with a new signing key, unless the account has maxPerAccount already:
   * counting and inserting are one atomic step (LMDB's single writer; a row lock on the account
   * elsewhere), so concurrent creates never pass the limit, the loser failing with
   * resource_limit_exceeded (AppError). Also ends any "no webhooks" cache of the account.
   */
  create(input: NewWebhookInput): Promise<NewWebhook>;

  get(id: string): Promise<Webhook | undefined>;

  /** The key deliveries are signed with; null when the webhook is gone. */
  signingKey(id: string): Promise<string | null>;

  /** The delivery counters and last answer (zeros before the first attempt). */
  status(id: string): Promise<WebhookStatus>;

  /** An account's webhooks in creation order (createdAt, then id), one page, with the number of matches. */
  list(f: WebhookFilter): Promise<{ results: Webhook[]; totalCount: number }>;

  /**
   * Applies a patch (a read-modify-write of one record, atomic); disabling drops what was queued
   * for the webhook in the same commit. Undefined when the webhook does not exist.
   */
  update(id: string, patch: WebhookPatch): Promise<Webhook | undefined>;

  /** A new signing key replacing the old at once; undefined when the webhook does not exist. */
  regenerateSigningKey(id: string): Promise<NewWebhook | undefined>;

  /** Removes the webhook with its key, status and outbox; false when it did not exist. */
  delete(id: string): Promise<boolean>;
}

/** An outbox entry to POST now, with its webhook and the key to sign with. */
export interface Claim {
  webhook: Webhook;
  secret: string;
  entry: OutboxEntry;
}

export interface ClaimRequest {
  nowMs: number;
  /** Claims at most this many in total. */
  max: number;
  /** How many more requests each webhook may have in flight: `byWebhook[id]`, else `default`. */
  freeSlots: { default: number; byWebhook: Readonly<Record<string, number>> };
}

export interface AttemptRecord {
  entry: OutboxEntry;
  atMs: number;
  statusCode: number | null;
  /** null on success. */
  error: string | null;
  /** Failed attempts: when to try again; undefined gives the entry up (counted as failed). */
  retryAtMs?: number;
}

/** done: delivered; retry: rescheduled; dropped: given up; gone: the entry was removed meanwhile. */
export type AttemptOutcome = 'done' | 'retry' | 'dropped' | 'gone';

export interface WebhookOutboxPort {
  /**
   * Claims due entries (only the oldest entry of a message and webhook is ever due, so a
   * message's events reach a webhook in order), per webhook up to its free slots, and says when
   * the earliest entry left for later is due (the dispatcher's next wake-up). A claimed entry is
   * not returned again until recordAttempt or release gives it back, so concurrent claimers never
   * get the same entry (LMDB: a claim set beside the single writer; elsewhere a claim column
   * taken with a row lock). Entries of deleted or disabled webhooks, and of deleted channels,
   * are dropped on the way.
   */
  claimDue(r: ClaimRequest): Promise<{ claims: Claim[]; nextDueMs: number | undefined }>;

  /**
   * One commit per attempt: the entry is removed (success, give-up) or rescheduled, the next
   * entry of its message becomes due, the webhook's status is updated; the claim ends either way.
   * An entry that is gone already (webhook deleted or disabled meanwhile) changes nothing.
   */
  recordAttempt(r: AttemptRecord): Promise<AttemptOutcome>;

  /** Gives claimed entries back unsent (an attempt aborted at shutdown): they are due again. */
  release(entries: readonly OutboxEntry[]): Promise<void>;

  /** Entries waiting for one webhook, claimed ones included. */
  pendingCount(webhookId: string): Promise<number>;
}
