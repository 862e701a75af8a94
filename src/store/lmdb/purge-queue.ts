/**
 * The list of deleted channels still being purged (channelPurges), kept apart from the purge
 * itself (channel-purge.ts) as a leaf module: the readers that skip these channels (stats.ts,
 * activity-query.ts) import it without an import cycle through events.ts.
 */
import { dbsOf } from './databases.js';
import type { Store } from './env.js';
import { noteStatChangeInTxn } from './stats-changes.js';

export type StatsDb = 'statsDaily' | 'statsDailyTags' | 'statsQuarter' | 'statsQuarterTags';

export interface ChannelPurge {
  channelId: string;
  accountId: string;
  deletedAt: string;
  /** 'jobs', 'broadcasts', 'events', the received messages and their counts, then one phase per statistics database. */
  phase: 'jobs' | 'broadcasts' | 'events' | 'inbound' | 'inboundCounts' | StatsDb | 'statsRollup';
  /** The jobs, inbound and statistics phases: the last key looked at. */
  cursor?: unknown[];
}

/** Inside the delete transaction. */
export function schedulePurgeInTxn(store: Store, c: { channelId: string; accountId: string; deletedAt: string }): void {
  dbsOf(store).channelPurges.put(c.channelId, { ...c, phase: 'jobs' } satisfies ChannelPurge);
  dbsOf(store).meta.put('channelDeletions', channelDeletions(store) + 1);
  // Its counters stop counting in every bucket at once (domain/stat-changes.ts).
  noteStatChangeInTxn(store, c.accountId, 0);
}

/** How many channels were ever deleted: cached event counts made before a deletion are stale. */
export function channelDeletions(store: Store): number {
  return (dbsOf(store).meta.get('channelDeletions') as number | undefined) ?? 0;
}

export function pendingPurges(store: Store): string[] {
  return [...dbsOf(store).channelPurges.getKeys({})] as string[];
}

/**
 * Deleted channels of an account whose data may still be in the store: account-wide reads skip
 * them. Empty (one short range read) unless a deletion is under way.
 */
export function hiddenChannels(store: Store, accountId: string): ReadonlySet<string> {
  const out = new Set<string>();
  for (const { value } of dbsOf(store).channelPurges.getRange({})) {
    const p = value as ChannelPurge;
    if (p.accountId === accountId) out.add(p.channelId);
  }
  return out;
}

