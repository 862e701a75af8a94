/**
 * The channel service: the channel verbs of the API (spec 4.1-4.5) with their access checks, and
 * the access rule every route that names a channel applies. Each verb takes the caller's
 * principal, so the route only parses and maps. Deleting a channel also wakes the purger (the
 * coordination's 'purges' topic, heard by the purger of whichever node leads the purge), which
 * removes its messages, events and counters after the 204 (store/channel-purge.ts).
 */
import type { Coordination } from '../coordination/port.js';
import { requireAccountKey } from '../domain/access.js';
import { AppError } from '../domain/errors.js';
import { isUuid } from '../domain/uuid.js';
import type { Channel, DeliveryType, Principal, Tracking } from '../domain/types.js';
import type { ChannelFilter, StoredChannel } from '../store/port/channels.js';
import type { StorePort } from '../store/port/index.js';

export interface ChannelInput {
  name?: string;
  deliveryType?: DeliveryType;
  tracking?: Partial<Tracking>;
  /** Issue 35: a pool of delivery.pools; null (PATCH) removes the channel's. */
  ipPool?: string | null;
}

export interface ChannelServiceOptions {
  store: StorePort;
  /** Wakes the channel purger ('purges') once a deletion committed. */
  coordination: Pick<Coordination, 'wake'>;
  /** config.limits.channelsPerAccount */
  maxPerAccount: number;
  /** Whether a name is a configured pool of sending IPs (SendingIps: delivery.pools and "default"). */
  isPool: (name: string) => boolean;
}

export class ChannelService {
  constructor(private readonly o: ChannelServiceOptions) {}

  /** A live channel, tracking off unless asked for (spec 4.1 defaults). Account-level keys only. */
  async create(p: Principal, input: ChannelInput & { name: string }): Promise<Channel> {
    requireAccountKey(p);
    this.checkPool(input.ipPool);
    return this.o.store.channels.create({
      accountId: p.accountId,
      name: input.name,
      deliveryType: input.deliveryType ?? 'live',
      tracking: { links: input.tracking?.links ?? false, opens: input.tracking?.opens ?? false },
      ...(typeof input.ipPool === 'string' ? { ipPool: input.ipPool } : {}),
      maxPerAccount: this.o.maxPerAccount,
    });
  }

  list(filter: ChannelFilter): Promise<{ results: Channel[]; totalCount: number }> {
    return this.o.store.channels.list(filter);
  }

  /** The channel, if the principal may read it (accessibleChannel). */
  get(p: Principal, id: string): Promise<Channel> {
    return accessibleChannel(this.o.store, p, id);
  }

  /** Whether the channel is visible (404/403) comes before whether the key may write it (403). */
  async update(p: Principal, id: string, patch: ChannelInput): Promise<Channel> {
    const channel = await this.writableBy(p, id);
    this.checkPool(patch.ipPool);
    const updated = await this.o.store.channels.update(channel.id, patch);
    if (!updated) throw notFound(channel.id);
    return updated;
  }

  /** From the commit on, nothing of the channel is readable; its data goes in the background. */
  async delete(p: Principal, id: string): Promise<void> {
    const channel = await this.writableBy(p, id);
    if (!(await this.o.store.channels.delete(channel.id))) throw notFound(channel.id);
    this.o.coordination.wake('purges');
  }

  /** 422 for a pool the configuration does not have: its mail could not go out. */
  private checkPool(pool: string | null | undefined): void {
    if (typeof pool !== 'string' || this.o.isPool(pool)) return;
    throw new AppError('validation_failed', `ipPool "${pool}" is not a pool of delivery.pools`, {
      errors: { '/ipPool': [{ code: 'unknown_pool', message: 'must name a pool of delivery.pools (or "default")' }] },
    });
  }

  /** accessibleChannel, then the account-key rule: a channel key learns 404/403 as for a read first. */
  private async writableBy(p: Principal, id: string): Promise<Channel> {
    const channel = await accessibleChannel(this.o.store, p, id);
    requireAccountKey(p);
    return channel;
  }
}

/**
 * The channel a request names, if the principal may act on it (spec section 5).
 * Unknown (or malformed) id: 404 channel_not_found; another account's or another channel's: 403.
 * A deleted channel is 404 too: spec 4.5 removes all its data (store/channel-purge.ts).
 */
export async function accessibleChannel(store: Pick<StorePort, 'channels'>, p: Principal, id: string): Promise<Channel> {
  return accessOf(isUuid(id) ? await store.channels.getRecord(id.toLowerCase()) : undefined, p, id);
}

/** The access rule of accessibleChannel over the record read for `id`. */
function accessOf(c: StoredChannel | undefined, p: Principal, id: string): Channel {
  if (!c) throw notFound(id);
  if (c.accountId !== p.accountId || (p.channelId && p.channelId !== c.id)) {
    throw new AppError('forbidden', 'The API key may not access this channel');
  }
  if (c.deletedAt) throw notFound(id);
  return c;
}

function notFound(id: string): AppError {
  return new AppError('channel_not_found', `Channel ${id} does not exist`);
}
