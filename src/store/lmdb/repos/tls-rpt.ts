/** The LMDB engine's LmdbTlsRpt: the port's verbs over the functions of store/lmdb/. */
import type { Store } from '../env.js';
import type { TlsRptPort } from '../../port/index.js';

export class LmdbTlsRpt implements TlsRptPort {
  constructor(private readonly store: Store) {}
}
