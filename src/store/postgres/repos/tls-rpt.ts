/**
 * TlsRptPort over tls_rpt_counts, tls_rpt_failures and tls_rpt_reports (schema/delivery-state.ts).
 * Counts merge by upserts (tls-rpt-counts.ts); a day's report is created by an insert-if-absent
 * on its primary key, so of racing runs on any nodes exactly one creates it.
 */
import type { TlsRptDay, TlsRptPort, TlsRptReport } from '../../port/delivery-state.js';
import type { Sql } from '../client.js';
import type { PgContext } from '../context.js';
import { addCountsInTx, countsOf } from '../tls-rpt-counts.js';

interface ReportRow {
  day: string;
  policy_domain: string;
  report_id: string;
  gzip: Uint8Array;
  pending: string[];
  attempts: number;
  next_at_ms: number;
}

const toReport = (r: ReportRow): TlsRptReport => ({ reportId: r.report_id, gzip: r.gzip, pending: r.pending, attempts: r.attempts, nextAtMs: r.next_at_ms });
const bytes = (u: Uint8Array): Buffer => Buffer.from(u.buffer, u.byteOffset, u.byteLength);

export function pgTlsRpt(ctx: PgContext): TlsRptPort {
  return {
    async addCounts(batch) {
      if (batch.length > 0) await ctx.begin((tx) => addCountsInTx(tx, batch));
    },
    counts: (day, policyDomain) => countsOf(ctx.sql, day, policyDomain),
    async unreportedDays(beforeDay) {
      return ctx.sql<TlsRptDay[]>`
        SELECT DISTINCT c.day, c.policy_domain AS "policyDomain" FROM tls_rpt_counts c
        WHERE c.day < ${beforeDay}
          AND NOT EXISTS (SELECT 1 FROM tls_rpt_reports r WHERE r.day = c.day AND r.policy_domain = c.policy_domain)
        ORDER BY c.day, "policyDomain"`.then((rows) => rows.map((r) => ({ day: r.day, policyDomain: r.policyDomain })));
    },
    async createReport(day, policyDomain, report) {
      const rows = await ctx.sql`
        INSERT INTO tls_rpt_reports ${reportValues(ctx.sql, day, policyDomain, report)}
        ON CONFLICT (day, policy_domain) DO NOTHING RETURNING 1`;
      return rows.length > 0;
    },
    async updateReport(day, policyDomain, report) {
      await ctx.sql`
        INSERT INTO tls_rpt_reports ${reportValues(ctx.sql, day, policyDomain, report)}
        ON CONFLICT (day, policy_domain) DO UPDATE SET report_id = excluded.report_id, gzip = excluded.gzip,
          pending = excluded.pending, attempts = excluded.attempts, next_at_ms = excluded.next_at_ms`;
    },
    async report(day, policyDomain) {
      const [row] = await ctx.sql<ReportRow[]>`SELECT * FROM tls_rpt_reports WHERE day = ${day} AND policy_domain = ${policyDomain}`;
      return row ? toReport(row) : undefined;
    },
    async dueReports(nowMs) {
      // The partial index tls_rpt_reports_due holds exactly the reports with URIs pending.
      const rows = await ctx.sql<ReportRow[]>`
        SELECT * FROM tls_rpt_reports WHERE cardinality(pending) > 0 AND next_at_ms <= ${nowMs} ORDER BY day, policy_domain`;
      return rows.map((r) => ({ day: r.day, policyDomain: r.policy_domain, report: toReport(r) }));
    },
    removeBefore: (beforeDay) => removeBefore(ctx, beforeDay),
  };
}

function reportValues(sql: Sql, day: string, policyDomain: string, r: TlsRptReport) {
  return sql`(day, policy_domain, report_id, gzip, pending, attempts, next_at_ms)
    VALUES (${day}, ${policyDomain}, ${r.reportId}, ${bytes(r.gzip)}, ${r.pending}::text[], ${r.attempts}, ${r.nextAtMs})`;
}

/** One transaction; entries counted as the LMDB engine counts them (a policy's counts, a report). */
async function removeBefore(ctx: PgContext, beforeDay: string): Promise<number> {
  return ctx.begin(async (tx) => {
    await tx`DELETE FROM tls_rpt_failures WHERE day < ${beforeDay}`;
    const counts = await tx`DELETE FROM tls_rpt_counts WHERE day < ${beforeDay}`;
    const reports = await tx`DELETE FROM tls_rpt_reports WHERE day < ${beforeDay}`;
    return counts.count + reports.count;
  });
}
