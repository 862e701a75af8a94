/**
 * The PostgreSQL engine's BroadcastsPort: accept (broadcast-accept.ts), cancel
 * (broadcast-cancel.ts) and the reads (broadcast-reads.ts). A batch's progress is not a verb
 * here: it commits with the batch's messages (submission-commit.ts, broadcast-progress.ts).
 */
import type { BroadcastsPort, BroadcastView } from '../../port/broadcasts.js';
import type { PgContext } from '../context.js';
import { acceptBroadcast, type AcceptInput } from '../broadcast-accept.js';
import { cancelBroadcast } from '../broadcast-cancel.js';
import {
  broadcastCounters,
  broadcastEntries,
  broadcastFailures,
  broadcastSuppressions,
  getBroadcast,
  listChannelBroadcasts,
  nextActiveBroadcast,
  viewBroadcast,
} from '../broadcast-reads.js';

export function pgBroadcasts(ctx: PgContext): BroadcastsPort {
  return {
    accept: <C, E>(input: AcceptInput<C, E>) => acceptBroadcast(ctx, input),
    get: <C>(id: string) => getBroadcast<C>(ctx.sql, id),
    view: <C>(id: string) => viewBroadcast<C>(ctx.sql, id),
    nextActive: <C>() => nextActiveBroadcast<C>(ctx.sql),
    entries: <E>(id: string, from: number, count: number) => broadcastEntries<E>(ctx.sql, id, from, count),
    cancel: (id: string, now: Date) => cancelBroadcast(ctx, id, now),
    failures: (id: string, page: { limit: number; offset: number }) => broadcastFailures(ctx.sql, id, page),
    suppressions: (id: string, page: { limit: number; offset: number }) => broadcastSuppressions(ctx.sql, id, page),
    counters: (id: string) => broadcastCounters(ctx.sql, id),
    listOfChannel: <C>(q: { channelId: string; limit: number; offset: number; match: (b: BroadcastView<C>) => boolean }) => listChannelBroadcasts<C>(ctx.sql, q),
  };
}
