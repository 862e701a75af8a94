import type { PgContext } from '../context.js';
import type { ChannelsPort } from '../../port/channels.js';
import { pending } from './pending.js';

export function pgChannels(_ctx: PgContext): ChannelsPort {
  return pending<ChannelsPort>('Channels');
}
