/**
 * The received messages and their day counts in a deleted channel's purge (channel-purge.ts,
 * phases 'inbound' and 'inboundCounts'; spec 4.5: "removes the channel permanently with all data
 * tied to it"). Both are keyed by account in inboundMessageIndex (['a', accountId, receivedMs,
 * id] the list, ['n', accountId, day, channelId] the counts), so each phase walks the account's
 * range from a saved cursor, `max` keys looked at per step, and removes those of the channel.
 * The channel's routes went in the delete's commit, so no copy for it is committed afterwards
 * (inbound-messages.ts commitInbound reads the channel's tombstone in the commit).
 */
import { dbsOf } from './databases.js';
import type { Store } from './env.js';
import { removeInboundInTxn, getInbound } from './inbound-messages.js';
import { KEY_MAX } from './layout.js';
import { pageAfter, sameKeyParts } from './page-after.js';

export type InboundPhase = 'inbound' | 'inboundCounts';

export interface InboundPurgeStep {
  removed: number;
  finished: boolean;
  cursor?: unknown[];
}

interface Scope {
  accountId: string;
  channelId: string;
}

export function purgeInboundInTxn(store: Store, p: Scope, phase: InboundPhase, cursor: unknown[] | undefined, max: number): InboundPurgeStep {
  const tag = phase === 'inbound' ? 'a' : 'n';
  const index = dbsOf(store).inboundMessageIndex;
  const range = (r: { start?: unknown[]; limit: number }) => index.getKeys({ start: (r.start ?? [tag, p.accountId]) as string[], end: [tag, p.accountId, KEY_MAX], limit: r.limit }) as Iterable<unknown[]>;
  const keys = pageAfter(cursor, max, range, (k) => k, sameKeyParts);
  let removed = 0;
  for (const key of keys) {
    if (phase === 'inboundCounts' ? key[3] === p.channelId : removeIfOfChannel(store, key[3] as string, p.channelId)) {
      if (phase === 'inboundCounts') index.remove(key);
      removed++;
    }
  }
  // Counted as work by keys looked at, so a step is bounded however few belong to the channel.
  return { removed: Math.max(keys.length, removed), finished: keys.length < max, cursor: keys[keys.length - 1] ?? cursor };
}

function removeIfOfChannel(store: Store, id: string, channelId: string): boolean {
  const m = getInbound(store, id);
  if (m?.channelId !== channelId) return false;
  removeInboundInTxn(store, m);
  return true;
}

/** What is left of the channel's received messages and day counts: a full scan, for checks only. */
export function inboundRemains(store: Store, channelId: string): { inboundMessages: number; inboundCounts: number } {
  const dbs = dbsOf(store);
  let inboundMessages = 0;
  for (const { value } of dbs.inboundMessages.getRange({})) if ((value as { message: { channelId: string } }).message.channelId === channelId) inboundMessages++;
  let inboundCounts = 0;
  for (const key of dbs.inboundMessageIndex.getKeys({ start: ['n'], end: ['n', KEY_MAX] })) if ((key as unknown[])[3] === channelId) inboundCounts++;
  return { inboundMessages, inboundCounts };
}
