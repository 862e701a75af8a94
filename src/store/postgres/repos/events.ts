/**
 * The PostgreSQL engine's EventsPort (store/port/events.ts): the reads over the event log that
 * appendEvents (event-log.ts) writes. A page, its count (and the message list's records) are read
 * in one REPEATABLE READ READ ONLY transaction: one snapshot, which holds a prefix of the log (the
 * seqs commit in order under the event_log_head row lock), so `after` paging never skips an event.
 * No count cache: a node-local one would need invalidating on every node (retention, the channel
 * purge); a count's cost is bounded instead (activity-plan.ts).
 *
 * Every read is bounded by seq >= floor: retention leaves the rows below the floor in their range
 * partition until it drops the whole partition (event-retention.ts).
 */
import type { EventRecord } from '../../../domain/types.js';
import type { ActivityFilter, ActivityPage, EventsPort, MessageFilter, MessageOwner, MessagePage, PageOptions } from '../../port/events.js';
import type { Tx } from '../client.js';
import type { PgContext } from '../context.js';
import { seqAboveFloor } from '../event-floor.js';
import { countOf, pageOf } from '../activity-page.js';
import { scopeOf } from '../activity-plan.js';
import { messageItems } from '../activity-messages.js';

/**
 * A read-only snapshot: never a serialization failure, never a lock. Its statements are planned
 * for their actual values (a walk's LIMIT, a hot tag): a generic plan of a prepared statement
 * could read every match of a lead where a custom one streams an ordered range.
 */
function snapshot<T>(ctx: PgContext, fn: (tx: Tx) => Promise<T>): Promise<T> {
  return ctx.sql.begin('isolation level repeatable read read only', async (tx) => {
    await tx`SET LOCAL plan_cache_mode = force_custom_plan`;
    return fn(tx);
  }) as Promise<T>;
}

async function pageWithCount(tx: Tx, f: ActivityFilter, opts: PageOptions): Promise<ActivityPage> {
  const scope = await scopeOf(tx, f);
  const [page, total] = await Promise.all([pageOf(tx, f, opts, scope), countOf(tx, f, scope)]);
  return { ...page, totalCount: total.count, totalCountExact: total.exact };
}

export function pgEvents(ctx: PgContext): EventsPort {
  return {
    page(filter: ActivityFilter, opts: PageOptions): Promise<ActivityPage> {
      return snapshot(ctx, (tx) => pageWithCount(tx, filter, opts));
    },

    /** `page` over the accepted events (one per message), with each message's record and delivery type. */
    messagePage(filter: MessageFilter, opts: PageOptions): Promise<MessagePage> {
      return snapshot(ctx, async (tx) => {
        const page = await pageWithCount(tx, { ...filter, eventTypes: ['accepted'] }, opts);
        return { ...page, results: await messageItems(tx, page.results) };
      });
    },

    async ofMessage(messageId: string): Promise<EventRecord[]> {
      const rows = await ctx.sql<{ doc: EventRecord }[]>`
        SELECT doc FROM events WHERE message_id = ${messageId} AND ${seqAboveFloor(ctx.sql)} ORDER BY seq`;
      return rows.map((r) => r.doc);
    },

    /** From the record, else from the message's first remaining event (retention removed the record). */
    async ownerOfMessage(messageId: string): Promise<MessageOwner | undefined> {
      const [row] = await ctx.sql<{ account_id: string; channel_id: string }[]>`
        SELECT account_id, channel_id FROM (
          SELECT 0 AS p, account_id, channel_id FROM messages WHERE id = ${messageId}
          UNION ALL
          (SELECT 1 AS p, account_id, channel_id FROM events
           WHERE message_id = ${messageId} AND ${seqAboveFloor(ctx.sql)} ORDER BY seq LIMIT 1)
        ) o ORDER BY p LIMIT 1`;
      return row ? { accountId: row.account_id, channelId: row.channel_id } : undefined;
    },

    async bounds(): Promise<{ floor: number; last: number }> {
      const [row] = await ctx.sql<{ floor: number; last: number }[]>`SELECT f.floor, h.last FROM event_log_head h, event_log_floor f`;
      return { floor: row.floor, last: row.last };
    },
  };
}
