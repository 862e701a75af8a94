/** The LMDB engine's LmdbInboundMessages: the port's verbs over store/lmdb/inbound-messages.ts. */
import type { AuthVerdicts } from '../../../domain/auth-verdicts.js';
import type { InboundMessage } from '../../../domain/inbound-message.js';
import type { Store } from '../env.js';
import type {
  InboundAttemptRecord,
  InboundClaim,
  InboundClaimRequest,
  InboundCommit,
  InboundCursor,
  InboundMessageFilter,
  InboundMessagesPort,
  InboundWriteOutcome,
  ReceivedPerDayQuery,
} from '../../port/inbound-messages.js';
import {
  claimDueInbound,
  commitInbound,
  getInbound,
  getInboundRaw,
  listInbound,
  markInboundProcessed,
  receivedPerDay,
  recordInboundAttempt,
  releaseInboundClaims,
  requeueInbound,
} from '../inbound-messages.js';

export class LmdbInboundMessages implements InboundMessagesPort {
  constructor(private readonly store: Store) {}

  commit(c: InboundCommit): Promise<InboundMessage[]> {
    return commitInbound(this.store, c);
  }

  async get(id: string): Promise<InboundMessage | undefined> {
    return getInbound(this.store, id);
  }

  async raw(id: string): Promise<Buffer | undefined> {
    return getInboundRaw(this.store, id);
  }

  async list(f: InboundMessageFilter): Promise<{ results: InboundMessage[]; next: InboundCursor | null }> {
    return listInbound(this.store, f);
  }

  claimDue(r: InboundClaimRequest): Promise<{ claims: InboundClaim[]; nextDueMs: number | undefined }> {
    return claimDueInbound(this.store, r);
  }

  releaseClaims(o: { owner: string; nowMs: number }): Promise<number> {
    return releaseInboundClaims(this.store, o);
  }

  markProcessed(id: string, lease: number, auth: AuthVerdicts): Promise<InboundWriteOutcome> {
    return markInboundProcessed(this.store, id, lease, auth);
  }

  recordAttempt(r: InboundAttemptRecord): Promise<InboundWriteOutcome> {
    return recordInboundAttempt(this.store, r);
  }

  requeue(id: string, nowMs: number): Promise<InboundMessage | undefined> {
    return requeueInbound(this.store, id, nowMs);
  }

  async receivedPerDay(q: ReceivedPerDayQuery): Promise<{ day: number; received: number }[]> {
    return receivedPerDay(this.store, q);
  }
}
