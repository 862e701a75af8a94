/**
 * Decoded records kept by one open store. Store creates a new set together with the databases
 * (store/env.ts start), so a reopened store starts empty and two stores never share an entry;
 * only the verbs of src/store/ reach it, through cachesOf (databases.ts).
 */
import { LRUCache } from 'lru-cache';
import type { SendingDomain } from '../../domain/sending-domain.js';
import type { Account, MessageRecord } from '../../domain/types.js';
import type { StoredChannel } from '../port/channels.js';

/** A value derived from a stored record, with the exact stored bytes it came from (bytes.ts revalidated). */
export interface ByBytes<T> {
  bytes: Buffer;
  value: T;
}

/** Bound of the domain cache: the domains a busy instance sends from, not every domain stored. */
const DOMAINS_MAX = 1000;

/** Bound of the channel cache: the channels whose mail is in the queue, not every channel stored. */
const CHANNELS_MAX = 1000;

/** Bound of the account cache: the accounts sending now, not every account stored. */
const ACCOUNTS_MAX = 1000;

/** A message record decoded for a delivery attempt, with its stored bytes (delivery-messages.ts). */
export interface DeliveryMessage {
  bytes: Buffer;
  message: MessageRecord;
}

/** Bound of the delivery message cache: more than the attempts in flight (its entries go at their outcome). */
const DELIVERY_MESSAGES_MAX = 1000;

/** Accounts known to have no webhook, valid while Store.failedCommits stays what it was. */
export interface NoWebhookAccounts {
  failedCommits: number;
  accounts: Set<string>;
}

export class ReadCaches {
  /**
   * store/domains.ts getDomain, by domain id; least recently read entries go first. Each hit is
   * revalidated against the stored bytes, so a write by any writer is its invalidation (what an
   * engine shared by several nodes does instead: store/port/domains.ts).
   */
  readonly domains = new LRUCache<string, ByBytes<SendingDomain>>({ max: DOMAINS_MAX });
  /**
   * store/channel-records.ts getChannelRecord (and getChannel, isChannelDeleted through it), by
   * channel id; revalidated against the stored bytes at every read, like the domains.
   */
  readonly channels = new LRUCache<string, ByBytes<StoredChannel>>({ max: CHANNELS_MAX });
  /** store/accounts.ts getAccount, by account id; revalidated like the domains. */
  readonly accounts = new LRUCache<string, ByBytes<Account>>({ max: ACCOUNTS_MAX });
  /** store/delivery-messages.ts: the records of the attempts in flight, by message id. */
  readonly deliveryMessages = new LRUCache<string, DeliveryMessage>({ max: DELIVERY_MESSAGES_MAX });
  /** store/webhook-outbox.ts: replaced by a fresh set after a failed commit (see there). */
  noWebhooks: NoWebhookAccounts = { failedCommits: 0, accounts: new Set() };
}
