/** The LMDB engine's LmdbWebhookOutbox: the port's verbs over the functions of store/lmdb/. */
import type { OutboxEntry } from '../../../domain/webhook.js';
import type { Store } from '../env.js';
import type { WebhookOutboxPort } from '../../port/index.js';
import type { AttemptOutcome, AttemptRecord, Claim, ClaimRequest } from '../../port/webhooks.js';
import { claimDue, outboxKeyOf, pendingCount, recordAttempt } from '../webhook-outbox.js';

export class LmdbWebhookOutbox implements WebhookOutboxPort {
  /**
   * Entries claimed and not yet given back (outboxKeyOf). In memory: one process writes this
   * store, and a restart gives every claim back (what was in flight is sent again: at-least-once).
   */
  private readonly claimed = new Set<string>();

  constructor(private readonly store: Store) {}

  claimDue(r: ClaimRequest): Promise<{ claims: Claim[]; nextDueMs: number | undefined }> {
    return claimDue(this.store, this.claimed, r);
  }

  /** The claim ends whatever the write does: an entry whose record failed is due again, as before. */
  async recordAttempt(r: AttemptRecord): Promise<AttemptOutcome> {
    try {
      return await recordAttempt(this.store, r);
    } finally {
      this.claimed.delete(outboxKeyOf(r.entry));
    }
  }

  async release(entries: readonly OutboxEntry[]): Promise<void> {
    for (const e of entries) this.claimed.delete(outboxKeyOf(e));
  }

  async pendingCount(webhookId: string): Promise<number> {
    return pendingCount(this.store, webhookId);
  }
}
