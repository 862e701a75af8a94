/**
 * Channel writes that involve more than the store: deleting a channel also wakes the purger,
 * which removes its messages, events and counters after the 204 (store/channel-purge.ts).
 */
import { AppError } from '../domain/errors.js';
import type { Store } from '../store/env.js';
import { deleteChannel } from '../store/channels.js';
import type { ChannelPurger } from './purger.js';

export class ChannelService {
  constructor(private readonly o: { store: Store; purger: Pick<ChannelPurger, 'kick'> }) {}

  /** From the commit on, nothing of the channel is readable; its data goes in the background. */
  async delete(channelId: string): Promise<void> {
    if (!(await deleteChannel(this.o.store, channelId))) throw new AppError('channel_not_found', `Channel ${channelId} does not exist`);
    this.o.purger.kick();
  }
}
