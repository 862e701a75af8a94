/**
 * WebhookOutboxPort over PostgreSQL (store/port/webhooks.ts). The claims are in the database
 * (webhook-outbox-claim.ts), so every node sees them; what stays in this process is only which
 * claim token each entry object it handed out came with (a WeakMap: an entry goes with its object,
 * so nothing is cleaned up, and a late verb on an object is fenced still): the
 * port's recordAttempt and release carry the entry, not the claim, and the token lets them
 * leave alone an entry whose lease ended and that another node claimed again. An entry this
 * process did not hand out (none is, in practice) is recorded or released unfenced, as LMDB does.
 */
import type { OutboxEntry } from '../../../domain/webhook.js';
import type { WebhookOutboxPort } from '../../port/webhooks.js';
import type { PgContext } from '../context.js';
import { claimDue } from '../webhook-outbox-claim.js';
import { recordAttempt, releaseEntries } from '../webhook-outbox-record.js';

export function pgWebhookOutbox(ctx: PgContext): WebhookOutboxPort {
  const tokens = new WeakMap<OutboxEntry, string>();
  return {
    async claimDue(r) {
      const { claims, nextDueMs, token } = await claimDue(ctx, r);
      for (const c of claims) tokens.set(c.entry, token);
      return { claims, nextDueMs };
    },

    /**
     * The claim ends whatever the write does (as LMDB's): when recording failed, the entry is
     * given back (best effort: if the database is gone too, the lease ends the claim).
     */
    async recordAttempt(r) {
      const token = tokens.get(r.entry);
      try {
        return await recordAttempt(ctx, r, token);
      } catch (err) {
        await releaseEntries(ctx, [{ entry: r.entry, token }]).catch(() => undefined);
        throw err;
      }
    },

    async release(entries) {
      await releaseEntries(ctx, entries.map((entry) => ({ entry, token: tokens.get(entry) })));
    },

    async pendingCount(webhookId) {
      const [row] = await ctx.sql<{ n: number }[]>`SELECT count(*)::int8 AS n FROM webhook_outbox WHERE webhook_id = ${webhookId}`;
      return row.n;
    },
  };
}
