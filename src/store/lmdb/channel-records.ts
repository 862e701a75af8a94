/**
 * Reading channel records, live or deleted. A leaf module (it imports no other store verbs), so
 * areas whose cleanup channels.ts runs on channel deletion can read channels without an import
 * cycle. channels.ts re-exports these.
 */
import type { Channel } from '../../domain/types.js';
import type { StoredChannel } from '../port/channels.js';
import { deepFreeze } from '../../domain/deep-freeze.js';
import { revalidated } from './bytes.js';
import { cachesOf, dbsOf } from './databases.js';
import type { Store } from './env.js';

export type { StoredChannel } from '../port/channels.js';

/** A live channel, or undefined (also for deleted ones). */
export function getChannel(store: Store, id: string): Channel | undefined {
  const c = getChannelRecord(store, id);
  return c && !c.deletedAt ? c : undefined;
}

/**
 * Includes tombstones, for showing linked channels of a domain. Frozen, because the same object
 * is handed to every reader until the record changes: every send reads its channel (policy, the
 * sending domain's link) and every delivery asks whether it was deleted, and decoding it each
 * time was a sixtieth of the SMTP intake's main thread (bench smtp --profile, issue 36). Kept
 * with the exact bytes it was decoded from and compared at every call, as getDomain does
 * (domains.ts): any write is seen by the very next read.
 */
export function getChannelRecord(store: Store, id: string): StoredChannel | undefined {
  const db = dbsOf(store).channels;
  return revalidated(db, cachesOf(store).channels, id, () => deepFreeze(db.get(id) as StoredChannel));
}

/**
 * Whether the channel is deleted (its tombstone is committed): from that commit on, before the
 * 204 of DELETE /channels/{id}, nothing more is done on its behalf (no delivery starts, no
 * broadcast entry is expanded, no message finished, no webhook posted), whatever the purge
 * has reached. One key read. The dispatcher asks this several times per delivered message, and
 * decoding the channel record each time was a tenth of its main thread (bench --profile, issue
 * 36): getChannelRecord reuses the decoded record while the stored bytes are the same.
 */
export function isChannelDeleted(store: Store, id: string): boolean {
  const record = getChannelRecord(store, id);
  return record !== undefined && record.deletedAt !== undefined;
}

/** isChannelDeleted, remembered per channel for one pass over many records (a lease, a claim). */
export function deletedChannels(store: Store): (id: string) => boolean {
  const seen = new Map<string, boolean>();
  return (id) => {
    let deleted = seen.get(id);
    if (deleted === undefined) seen.set(id, (deleted = isChannelDeleted(store, id)));
    return deleted;
  };
}

/** The port's snapshot (ChannelsPort.deletedAmong): every id read in one synchronous pass. */
export function deletedAmong(store: Store, ids: Iterable<string>): Set<string> {
  const deleted = deletedChannels(store);
  const out = new Set<string>();
  for (const id of ids) if (deleted(id)) out.add(id);
  return out;
}
