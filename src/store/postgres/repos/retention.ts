/** RetentionPort: the event and message sweep (retention-sweep.ts) and the DNS-failure sweep (dns-failure-sweep.ts). */
import type { RetentionPort } from '../../port/retention.js';
import type { PgContext } from '../context.js';
import { sweepDnsFailures } from '../dns-failure-sweep.js';
import { sweepBatch } from '../retention-sweep.js';

export function pgRetention(ctx: PgContext): RetentionPort {
  return {
    sweepBatch: (o) => sweepBatch(ctx, o),
    sweepDnsFailures: (o) => sweepDnsFailures(ctx, o),
    async isPending(messageId) {
      const rows = await ctx.sql`SELECT 1 FROM retention_pending WHERE message_id = ${messageId}`;
      return rows.length > 0;
    },
  };
}
