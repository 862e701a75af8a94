/** The LMDB engine's LmdbDnsFailures: the port's verbs over the functions of store/lmdb/. */
import type { Store } from '../env.js';
import type { DnsFailuresPort } from '../../port/index.js';

export class LmdbDnsFailures implements DnsFailuresPort {
  constructor(private readonly store: Store) {}
}
