/**
 * InboundMessagesPort over PostgreSQL (store/port/inbound-messages.ts), the behaviour of LMDB's
 * inbound-messages.ts: the record in inbound_messages.doc, the raw bytes, the claim's lease and
 * the claim's node (claim_owner) beside it (schema/inbound.ts).
 */
import { utcDay } from '../../../domain/stat-counters.js';
import { afterAttempt, receivedMessage, type InboundMessage } from '../../../domain/inbound-message.js';
import type { InboundClaimRequest, InboundCommit, InboundMessageFilter, InboundMessagesPort, InboundWriteOutcome, ReceivedPerDayQuery } from '../../port/inbound-messages.js';
import type { Tx } from '../client.js';
import type { PgContext } from '../context.js';
import { timeOrderedUuid } from '../../../domain/uuid.js';

function dueMs(m: InboundMessage): number | null {
  return m.nextAttemptAt === null ? null : Date.parse(m.nextAttemptAt);
}

export function pgInboundMessages(ctx: PgContext): InboundMessagesPort {
  const { sql } = ctx;
  return {
    commit: (c) => commitInbound(ctx, c),

    async get(id) {
      const [row] = await sql<{ doc: InboundMessage }[]>`SELECT doc FROM inbound_messages WHERE id = ${id}`;
      return row?.doc;
    },

    raw: (id) => readRaw(ctx, id),

    list: (f) => listInbound(ctx, f),
    claimDue: (r) => claimDue(ctx, r),
    releaseClaims: (o) => releaseClaims(ctx, o),

    markProcessed: (id, lease, auth) => underLease(ctx, id, lease, false, (m) => ({ ...m, processedAt: new Date().toISOString(), auth })),
    recordAttempt: (r) => underLease(ctx, r.id, r.lease, true, (m) => afterAttempt(m, r.attempt, r.end)),

    /** Under the row lock; the lease is raised so a late writer of an old claim is stale. */
    requeue: (id, nowMs) =>
      ctx.begin(async (tx) => {
        const [row] = await tx<{ doc: InboundMessage }[]>`SELECT doc FROM inbound_messages WHERE id = ${id} FOR UPDATE`;
        if (!row || row.doc.status === 'received') return row?.doc;
        const next: InboundMessage = { ...row.doc, status: 'received', nextAttemptAt: new Date(nowMs).toISOString() };
        await tx`UPDATE inbound_messages SET doc = ${tx.json(next as never)}, due_at_ms = ${nowMs}, lease = lease + 1, claim_owner = NULL WHERE id = ${id}`;
        return next;
      }),

    receivedPerDay: (q) => receivedPerDay(ctx, q),
  };
}

/**
 * Bytes of a raw message read per statement: the driver receives a bytea as hex text and decodes
 * it on the main thread, which for a 34 MB message (a 25 MB attachment) held the event loop for
 * 600-800 ms at once (test/integration/inbound-event-loop.test.ts on the PostgreSQL suite). In
 * slices of 1 MiB each decode is a few ms and the event loop turns between them. The column is
 * stored uncompressed out of line (STORAGE EXTERNAL, schema/inbound.ts), so a slice reads only
 * its own TOAST chunks.
 */
const RAW_SLICE = 1024 * 1024;

async function readRaw(ctx: PgContext, id: string): Promise<Buffer | undefined> {
  const { sql } = ctx;
  const [head] = await sql<{ size: number; first: Buffer }[]>`
    SELECT octet_length(raw)::int4 AS size, substring(raw FROM 1 FOR ${RAW_SLICE}) AS first FROM inbound_messages WHERE id = ${id}`;
  if (!head) return undefined;
  if (head.size <= RAW_SLICE) return head.first;
  const out = Buffer.allocUnsafe(head.size);
  let at = head.first.copy(out, 0);
  while (at < head.size) {
    const [slice] = await sql<{ part: Buffer | null }[]>`SELECT substring(raw FROM ${at + 1} FOR ${RAW_SLICE}) AS part FROM inbound_messages WHERE id = ${id}`;
    // Gone meanwhile (retention, a channel's purge): as if read a moment later.
    if (!slice?.part || slice.part.length === 0) return undefined;
    at += slice.part.copy(out, at);
  }
  return out;
}

/** Not of a deleted channel whose purge is under way: account-wide reads skip those (channel_purges). */
function notPurging(sql: PgContext['sql'], accountId: string) {
  return sql`channel_id <> ALL(ARRAY(SELECT p.channel_id FROM channel_purges p WHERE p.account_id = ${accountId}))`;
}

/** Every day of the range, zeros included, summed over the channels asked for. */
async function receivedPerDay(ctx: PgContext, q: ReceivedPerDayQuery): Promise<{ day: number; received: number }[]> {
  const { sql } = ctx;
  const rows = await sql<{ day: number; received: string }[]>`
    SELECT day, sum(received) AS received FROM inbound_daily_counts
    WHERE account_id = ${q.accountId} AND day BETWEEN ${q.fromDay} AND ${q.toDay}
      ${q.channelIds ? sql`AND channel_id = ANY(${q.channelIds}::text[])` : sql``}
      AND ${notPurging(sql, q.accountId)}
    GROUP BY day`;
  const days = Array.from({ length: Math.max(0, q.toDay - q.fromDay + 1) }, (_, i) => ({ day: q.fromDay + i, received: 0 }));
  for (const r of rows) days[r.day - q.fromDay].received = Number(r.received);
  return days;
}

/**
 * Every routed copy whose channel is not deleted, in one transaction, each row with its own raw
 * bytes. The channels' rows are read FOR SHARE (in id order, as channels-tx.ts lockLiveChannels): a channel
 * deleted since RCPT takes its copy with it, and a delete waits for this commit, so the purge that
 * follows it finds every copy (channels-tx.ts: no writer adds data of a deleted channel).
 */
async function commitInbound(ctx: PgContext, c: InboundCommit): Promise<InboundMessage[]> {
  const copies = c.messages.map((n) => receivedMessage(n, { id: timeOrderedUuid(), receivedAt: c.receivedAt, size: c.raw.length }));
  return ctx.begin(async (tx) => {
    const channelIds = [...new Set(copies.map((m) => m.channelId))];
    const rows = await tx<{ id: string; deleted: boolean }[]>`
      SELECT id, deleted_at_ms IS NOT NULL AS deleted FROM channels WHERE id = ANY(${channelIds}::text[]) ORDER BY id FOR SHARE`;
    const deleted = new Set(rows.filter((r) => r.deleted).map((r) => r.id));
    const made = copies.filter((m) => !deleted.has(m.channelId));
    for (const m of made) {
      await tx`
        INSERT INTO inbound_messages (id, account_id, route_id, channel_id, received_at_ms, due_at_ms, doc, raw)
        VALUES (${m.id}, ${m.accountId}, ${m.routeId}, ${m.channelId}, ${c.receivedAt.getTime()}, ${dueMs(m)}, ${tx.json(m as never)}, ${c.raw})`;
      await tx`
        INSERT INTO inbound_daily_counts (account_id, day, channel_id, received) VALUES (${m.accountId}, ${utcDay(c.receivedAt.getTime())}, ${m.channelId}, 1)
        ON CONFLICT (account_id, day, channel_id) DO UPDATE SET received = inbound_daily_counts.received + 1`;
    }
    return made;
  });
}

/** The filters in SQL, a part of a text compared as LMDB's matchesText does (lower-cased, no wildcards). */
async function listInbound(ctx: PgContext, f: InboundMessageFilter): Promise<{ results: InboundMessage[]; next: { receivedAtMs: number; id: string } | null }> {
  const { sql } = ctx;
  const part = (field: 'from' | 'subject', value: string | undefined) => {
    if (value === undefined) return sql``;
    const column = field === 'from' ? sql`doc->>'from'` : sql`doc->>'subject'`;
    return sql`AND position(lower(${value}::text) in lower(${column})) > 0`;
  };
  const rows = await sql<{ doc: InboundMessage; received_at_ms: string; id: string }[]>`
    SELECT doc, received_at_ms, id FROM inbound_messages
    WHERE account_id = ${f.accountId}
      ${f.routeId !== undefined ? sql`AND route_id = ${f.routeId}` : sql``}
      ${f.channelIds ? sql`AND channel_id = ANY(${f.channelIds}::text[])` : sql``}
      AND ${notPurging(sql, f.accountId)}
      ${f.status !== undefined ? sql`AND doc->>'status' = ${f.status}` : sql``}
      ${part('from', f.from)} ${part('subject', f.subject)}
      ${f.startMs !== undefined ? sql`AND received_at_ms >= ${f.startMs}` : sql``}
      ${f.endMs !== undefined ? sql`AND received_at_ms < ${f.endMs}` : sql``}
      ${f.after ? sql`AND (received_at_ms, id) < (${f.after.receivedAtMs}, ${f.after.id})` : sql``}
    ORDER BY received_at_ms DESC, id DESC LIMIT ${f.limit + 1}`;
  const results = rows.slice(0, f.limit).map((r) => r.doc);
  const last = results[results.length - 1];
  return { results, next: rows.length > f.limit ? { receivedAtMs: Date.parse(last.receivedAt), id: last.id } : null };
}

/** SKIP LOCKED: concurrent claimers (other nodes) take other rows; each claimed row moves past its lease. */
async function claimDue(ctx: PgContext, r: InboundClaimRequest) {
  return ctx.begin(async (tx) => {
    const rows = await tx<{ doc: InboundMessage; lease: number }[]>`
      SELECT doc, lease FROM inbound_messages WHERE due_at_ms IS NOT NULL AND due_at_ms <= ${r.nowMs}
      ORDER BY due_at_ms, id LIMIT ${r.max} FOR UPDATE SKIP LOCKED`;
    const until = r.nowMs + r.leaseMs;
    const ids = rows.map((row) => row.doc.id);
    if (ids.length > 0) {
      await tx`
        UPDATE inbound_messages SET lease = lease + 1, due_at_ms = ${until}, claim_owner = ${r.owner},
          doc = jsonb_set(doc, '{nextAttemptAt}', to_jsonb(${new Date(until).toISOString()}::text))
        WHERE id = ANY(${ids}::text[])`;
    }
    const [next] = await tx<{ ms: string | null }[]>`SELECT min(due_at_ms) AS ms FROM inbound_messages WHERE due_at_ms IS NOT NULL`;
    return {
      claims: rows.map((row) => ({ message: row.doc, lease: row.lease + 1 })),
      nextDueMs: next.ms === null ? undefined : Number(next.ms),
    };
  });
}

/** Under the row lock: applies `change` while the message is received and still under `lease` (ending the claim when `ends`). */
function underLease(ctx: PgContext, id: string, lease: number, ends: boolean, change: (m: InboundMessage) => InboundMessage): Promise<InboundWriteOutcome> {
  return ctx.begin(async (tx: Tx) => {
    const [row] = await tx<{ doc: InboundMessage; lease: number }[]>`SELECT doc, lease FROM inbound_messages WHERE id = ${id} FOR UPDATE`;
    if (!row || row.lease !== lease || row.doc.status !== 'received') return 'stale';
    const next = change(row.doc);
    await tx`UPDATE inbound_messages SET doc = ${tx.json(next as never)}, due_at_ms = ${dueMs(next)} ${ends ? tx`, claim_owner = NULL` : tx``} WHERE id = ${id}`;
    return 'recorded';
  });
}

/**
 * The claims `owner` holds, due at nowMs under a raised lease. One UPDATE: it waits for a row
 * another transaction has locked and then checks claim_owner on its latest version (READ
 * COMMITTED), so a claim another node took over meanwhile stays that node's.
 */
async function releaseClaims(ctx: PgContext, o: { owner: string; nowMs: number }): Promise<number> {
  const { sql } = ctx;
  const rows = await sql`
    UPDATE inbound_messages SET lease = lease + 1, due_at_ms = ${o.nowMs}, claim_owner = NULL,
      doc = jsonb_set(doc, '{nextAttemptAt}', to_jsonb(${new Date(o.nowMs).toISOString()}::text))
    WHERE due_at_ms IS NOT NULL AND claim_owner = ${o.owner} AND doc->>'status' = 'received'`;
  return rows.count;
}
