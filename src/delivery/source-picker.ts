/**
 * The source (local address and EHLO name) of each delivery attempt (issue 35): the message's
 * pool is its channel's ipPool, else delivery.defaultPools of its mail type, else "default"
 * (domain/sending-ips.ts); within the pool, SourceChooser's smooth weighted round robin.
 *
 * Each configured source also has its own pacer beside the dispatcher's global one (the
 * coordination's, so shared by every node of a cluster): at most its rate (its own `rate`, else
 * delivery.rate) at the receivers, awaited before the global slot.
 *
 * With no source configured the one answer is the kernel's choice (no bind, hostname in EHLO):
 * no channel read, no pacer of its own, exactly the delivery before sources existed.
 */
import type { Coordination, SharedPacer } from '../coordination/port.js';
import { SourceChooser } from '../domain/source-chooser.js';
import { KERNEL_SOURCE_NAME, poolOf, type SendingIps, type SendingSource } from '../domain/sending-ips.js';
import type { MessageRecord } from '../domain/types.js';

/** How long a channel's ipPool is remembered: a PATCH reaches delivery within this. */
const CHANNEL_POOL_TTL_MS = 10_000;

export interface PickedSource extends SendingSource {
  pool: string;
}

export interface SourcePickerOptions {
  ips: SendingIps;
  /** The channel's ipPool (store.channels.get), undefined when it has none or is gone. */
  channelPool: (channelId: string) => Promise<string | undefined>;
  coordination: Pick<Coordination, 'pacer'>;
  /** delivery.rate: a source's rate when it has none of its own. */
  defaultRate: number;
  now: () => number;
}

export class SourcePicker {
  private readonly chooser = new SourceChooser();
  private readonly pools = new Map<string, { pool: string | undefined; at: number }>();
  private readonly pacers = new Map<string, SharedPacer>();

  constructor(private readonly o: SourcePickerOptions) {}

  get configured(): boolean {
    return this.o.ips.configured;
  }

  /** The source of the next attempt of `message`; undefined when every source of its pool is unavailable. */
  async pick(message: Pick<MessageRecord, 'channelId' | 'mailType'>): Promise<PickedSource | undefined> {
    if (!this.o.ips.configured) return { ...this.o.ips.sources.get(KERNEL_SOURCE_NAME)!, pool: 'default' };
    const pool = poolOf(this.o.ips, message.mailType, await this.poolOfChannel(message.channelId));
    const name = this.chooser.pick(pool, this.o.ips.pools.get(pool) ?? []);
    return name === undefined ? undefined : { ...this.o.ips.sources.get(name)!, pool };
  }

  /**
   * Waits for a slot of the source's own pacer (real time, as the global pacer's wait), then
   * for the global slot (`global`, the dispatcher's beforeBody).
   */
  beforeBody(source: PickedSource, global: () => Promise<void> | undefined): Promise<void> | undefined {
    const pacer = this.pacerOf(source.name);
    if (!pacer) return global();
    const ms = pacer.take();
    if (ms === 0) return global();
    return new Promise<void>((resolve) => setTimeout(resolve, ms)).then(() => this.beforeBody(source, global));
  }

  private pacerOf(name: string): SharedPacer | undefined {
    if (!this.o.ips.configured) return undefined;
    let pacer = this.pacers.get(name);
    if (!pacer) {
      pacer = this.o.coordination.pacer(`delivery-receivers:${name}`, { perSecond: this.o.ips.sources.get(name)?.rate ?? this.o.defaultRate });
      this.pacers.set(name, pacer);
    }
    return pacer;
  }

  private async poolOfChannel(channelId: string): Promise<string | undefined> {
    const now = this.o.now();
    const known = this.pools.get(channelId);
    if (known && now - known.at < CHANNEL_POOL_TTL_MS) return known.pool;
    const pool = await this.o.channelPool(channelId);
    this.pools.set(channelId, { pool, at: now });
    return pool;
  }
}
