/** The LMDB engine's LmdbRetention: the port's verbs over the functions of store/lmdb/. */
import type { DnsFailureKey, DnsFailureSweep, RetentionPort, SweepBatchOptions, SweepResult } from '../../port/retention.js';
import { sweepDnsFailuresBatch } from '../dns-failures.js';
import type { Store } from '../env.js';
import { isRetentionPending, sweepRetentionBatch } from '../retention.js';

export class LmdbRetention implements RetentionPort {
  constructor(private readonly store: Store) {}

  sweepBatch(o: SweepBatchOptions): Promise<SweepResult> {
    return sweepRetentionBatch(this.store, o);
  }

  sweepDnsFailures(o: { nowMs: number; batch: number; after?: DnsFailureKey }): Promise<DnsFailureSweep> {
    return sweepDnsFailuresBatch(this.store, o);
  }

  async isPending(messageId: string): Promise<boolean> {
    return isRetentionPending(this.store, messageId);
  }
}
