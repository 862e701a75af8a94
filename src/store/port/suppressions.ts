/**
 * Suppressed recipients per channel and mail type.
 *
 * Part of the store port (store/port/index.ts): asynchronous verbs that take and return plain
 * data; what must commit together is one verb. Implemented by the LMDB engine in
 * store/lmdb/repos/ and checked by the contract suite in test/store-contract/.
 *
 * Addresses are compared case-insensitively and stored lower-cased: an engine keys a
 * suppression by (channel, mail type, lower-cased address), which is also its unique key.
 */
import type { MailType, SuppressionReason, SuppressionRecord } from '../../domain/types.js';

/** One change of SuppressionsPort.apply: add (with its reason) or remove an address. */
export type SuppressionOp = { op: 'add'; email: string; reason: SuppressionReason } | { op: 'remove'; email: string };

/** A page of a channel's list for one mail type (GET /suppressions). */
export interface SuppressionPageQuery {
  channelId: string;
  mailType: MailType;
  reason?: SuppressionReason;
  /** Case-insensitive substring of the address. */
  email?: string;
  limit: number;
  offset: number;
}

export interface SuppressionPage {
  /** Every match, not only this page's. */
  totalCount: number;
  /** In address order. */
  results: SuppressionRecord[];
}

export interface SuppressionsPort {
  /** Whether the address is suppressed for the channel and mail type (the submission check). */
  is(channelId: string, mailType: MailType, email: string): Promise<boolean>;

  /** The suppression with its reason and date, or undefined. */
  get(channelId: string, mailType: MailType, email: string): Promise<SuppressionRecord | undefined>;

  /** A channel's whole list, of one mail type or both, in (mail type, address) order. */
  list(channelId: string, mailType?: MailType): Promise<SuppressionRecord[]>;

  /** One page of a channel's list with the number of matches, in address order. */
  page(q: SuppressionPageQuery): Promise<SuppressionPage>;

  /**
   * Applies a request's changes together (POST /suppressions and /suppressions/remove): all of
   * them commit or none does, in the order given. An add is an insert-if-absent (the first
   * reason stays), a remove a delete-if-present, so concurrent requests about one address never
   * both report a change. Resolves with, per change in order, whether it changed anything
   * (false: already suppressed, or not suppressed).
   */
  apply(channelId: string, mailType: MailType, ops: readonly SuppressionOp[]): Promise<boolean[]>;
}
