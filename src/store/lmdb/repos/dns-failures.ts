/** The LMDB engine's LmdbDnsFailures: the port's verbs over the functions of store/lmdb/. */
import type { DnsFailuresPort } from '../../port/delivery-state.js';
import { countHardDnsFailureInTxn, hardDnsFailures } from '../dns-failures.js';
import type { Store } from '../env.js';

export class LmdbDnsFailures implements DnsFailuresPort {
  constructor(private readonly store: Store) {}

  countFailure(o: { accountId: string; domain: string; atMs: number }): Promise<boolean> {
    return this.store.write(() => countHardDnsFailureInTxn(this.store, o));
  }

  async recent(accountId: string, domain: string): Promise<number[]> {
    return hardDnsFailures(this.store, accountId, domain);
  }
}
