/**
 * SuppressionsPort over the suppressions table (schema/delivery-state.ts). Reads are primary-key
 * lookups or range scans of its (channel, mail type, address) prefix; apply is one transaction.
 */
import type { MailType, SuppressionRecord } from '../../../domain/types.js';
import type { SuppressionsPort } from '../../port/suppressions.js';
import type { SuppressionOp, SuppressionPage, SuppressionPageQuery } from '../../port/suppressions.js';
import type { PgContext } from '../context.js';
import { addSuppressions, isSuppressed, removeSuppressions } from '../suppressions-tx.js';

export function pgSuppressions(ctx: PgContext): SuppressionsPort {
  return {
    is: (channelId, mailType, email) => isSuppressed(ctx.sql, channelId, mailType, email),

    async get(channelId, mailType, email) {
      const [row] = await ctx.sql<{ doc: SuppressionRecord }[]>`
        SELECT doc FROM suppressions WHERE channel_id = ${channelId} AND mail_type = ${mailType} AND email = ${email.toLowerCase()}`;
      return row?.doc;
    },

    async list(channelId, mailType) {
      const rows = await ctx.sql<{ doc: SuppressionRecord }[]>`
        SELECT doc FROM suppressions WHERE channel_id = ${channelId} ${mailType ? ctx.sql`AND mail_type = ${mailType}` : ctx.sql``}
        ORDER BY mail_type, email`;
      return rows.map((r) => r.doc);
    },

    page: (q) => page(ctx, q),

    apply: (channelId, mailType, ops) => apply(ctx, channelId, mailType, ops),
  };
}

/**
 * The page and the number of matches in one statement (one snapshot). The address filter is a
 * substring of the lower-cased address (strpos, no pattern characters to escape); it scans the
 * channel's list for the mail type, as the LMDB engine does: an operator's listing, not a per-send path.
 */
async function page(ctx: PgContext, q: SuppressionPageQuery): Promise<SuppressionPage> {
  const sql = ctx.sql;
  const rows = await sql<{ doc: SuppressionRecord | null; total: number }[]>`
    WITH m AS (
      SELECT email, doc FROM suppressions
      WHERE channel_id = ${q.channelId} AND mail_type = ${q.mailType}
        ${q.reason ? sql`AND reason = ${q.reason}` : sql``}
        ${q.email ? sql`AND strpos(email, ${q.email.toLowerCase()}) > 0` : sql``}
    )
    SELECT p.doc, (SELECT count(*) FROM m) AS total
    FROM (SELECT 1) one
    LEFT JOIN LATERAL (SELECT doc FROM m ORDER BY email LIMIT ${q.limit} OFFSET ${q.offset}) p ON true`;
  return { totalCount: rows[0]?.total ?? 0, results: rows.flatMap((r) => (r.doc ? [r.doc] : [])) };
}

/** The advisory lock class of a (channel, mail type) list (two-int4 keys: apart from the migrations' bigint lock). */
const LIST_LOCK_CLASS = 0x5355_5050; // "SUPP"

/**
 * One transaction applying the changes in order: a run of consecutive adds (or removes) is one
 * statement that applies them in order as the port says (of two adds of one address the first
 * changes it, suppressions-tx.ts), and each run sees the ones before it. Atomic across nodes:
 * an add is an insert-if-absent and a remove a delete-if-present on the primary key. Under READ COMMITTED a DELETE does not wait for a row another
 * transaction inserted and has not committed, so two requests over many addresses could see each
 * other in part; the transaction-scoped advisory lock of the (channel, mail type) list serializes
 * requests on it, so each sees the other whole or not at all (port: "all commit or none does").
 */
async function apply(ctx: PgContext, channelId: string, mailType: MailType, ops: readonly SuppressionOp[]): Promise<boolean[]> {
  return ctx.begin(async (tx) => {
    await tx`SELECT pg_advisory_xact_lock(${LIST_LOCK_CLASS}::int4, hashtext(${channelId} || ':' || ${mailType}))`;
    const out: boolean[] = [];
    for (const run of runsOf(ops)) {
      if (run[0].op === 'add') out.push(...(await addSuppressions(tx, run.map((o) => ({ channelId, mailType, email: o.email, reason: (o as AddOp).reason })))));
      else out.push(...(await removeSuppressions(tx, channelId, mailType, run.map((o) => o.email))));
    }
    return out;
  });
}

type AddOp = Extract<SuppressionOp, { op: 'add' }>;

/** The ops cut into runs of the same kind, in order. */
function runsOf(ops: readonly SuppressionOp[]): SuppressionOp[][] {
  const runs: SuppressionOp[][] = [];
  for (const o of ops) {
    const last = runs[runs.length - 1];
    if (last && last[0].op === o.op) last.push(o);
    else runs.push([o]);
  }
  return runs;
}
