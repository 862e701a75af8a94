/** The LMDB engine's LmdbChannels: the port's verbs over the functions of store/lmdb/. */
import type { Store } from '../env.js';
import type { ChannelsPort } from '../../port/index.js';

export class LmdbChannels implements ChannelsPort {
  constructor(private readonly store: Store) {}
}
