/** The LMDB engine's LmdbMeta: the port's verbs over the functions of store/lmdb/. */
import type { Store } from '../env.js';
import type { MetaPort } from '../../port/index.js';
import { clearInitialKeyPending, isBootstrapped, isInitialKeyPending, markBootstrapped } from '../bootstrap-state.js';
import { ensureTrackingSecret, trackingSecret } from '../secrets.js';

export class LmdbMeta implements MetaPort {
  constructor(private readonly store: Store) {}

  async isBootstrapped(): Promise<boolean> {
    return isBootstrapped(this.store);
  }

  markBootstrapped(at: Date): Promise<void> {
    return markBootstrapped(this.store, at);
  }

  async isInitialKeyPending(): Promise<boolean> {
    return isInitialKeyPending(this.store);
  }

  clearInitialKeyPending(): Promise<void> {
    return clearInitialKeyPending(this.store);
  }

  /** Checked again inside the write (secrets.ts): processes sharing the data folder agree on one secret. */
  ensureTrackingSecret(): Promise<Buffer> {
    return ensureTrackingSecret(this.store);
  }

  /** Read from the memory map each time (a fresh copy): the secret never changes once made. */
  async trackingSecret(): Promise<Buffer> {
    return trackingSecret(this.store);
  }
}
