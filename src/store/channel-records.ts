/**
 * Reading channel records, live or deleted. A leaf module (it imports no other store verbs), so
 * areas whose cleanup channels.ts runs on channel deletion can read channels without an import
 * cycle. channels.ts re-exports these.
 */
import type { Channel } from '../domain/types.js';
import { dbsOf } from './databases.js';
import type { Store } from './env.js';

export interface StoredChannel extends Channel {
  deletedAt?: string;
}

/** A live channel, or undefined (also for deleted ones). */
export function getChannel(store: Store, id: string): Channel | undefined {
  const c = dbsOf(store).channels.get(id) as StoredChannel | undefined;
  return c && !c.deletedAt ? c : undefined;
}

/** Includes tombstones, for showing linked channels of a domain. */
export function getChannelRecord(store: Store, id: string): StoredChannel | undefined {
  return dbsOf(store).channels.get(id) as StoredChannel | undefined;
}
