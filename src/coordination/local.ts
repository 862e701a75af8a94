/**
 * The single-node coordination: today's behaviour behind the coordination port (port.ts).
 * Everything lives in this process's memory, as it did in each component before the port:
 *
 *  - wake-ups call the topic's listeners at once (wakeups.ts), as the dispatchers' notify()
 *    and the store's OutboxSignal do;
 *  - leases are a Map (leases.ts): with one daemon per data folder (folder-lock.ts) the only
 *    contenders are this process's own components, which never run one task twice at once;
 *  - the attempt budget and the pacer are queue/rate-limiter.ts's RateLimiter and Pacer
 *    unchanged, keyed limits are http/rate-limit.ts's buckets (key-buckets.ts), failure
 *    windows smtp/throttle.ts's sliding counts (failure-windows.ts), slots a count per key
 *    (slots.ts), counters a count and an expiry per key (counters.ts).
 *
 * One instance per process, made by the composition root and given to every component, so that
 * one name means one budget in the whole process, as one name means one row in a cluster.
 */
import { systemClock, type Clock } from '../queue/clock.js';
import { Pacer, RateLimiter } from '../queue/rate-limiter.js';
import { LocalExpiringEntries } from './expiring-entries.js';
import { LocalCounters } from './counters.js';
import { LocalFailureWindow } from './failure-windows.js';
import { KeyBuckets } from './key-buckets.js';
import { LeaseTable } from './leases.js';
import { named, type Named } from './named.js';
import { isNodeId, loadNodeId } from './node-id.js';
import type { Backlog, Coordination, Counters, ExpiringEntries, FailureWindow, FailureWindowOptions, KeyedRate, KeyedRateOptions, LeaderTask, Lease, PacerOptions, RateOptions, SharedPacer, SharedRate, Slots, WakeTopic } from './port.js';
import { LocalSlots } from './slots.js';
import { LocalWakeups } from './wakeups.js';

export interface LocalCoordinationOptions {
  /** This node's id; LocalCoordination.forDataDir reads (or creates) the data folder's. */
  nodeId: string;
  /**
   * Time for leases and the attempt budget (its monotonic reading): the dispatcher's clock,
   * fake in tests. Default: the system clock.
   */
  clock?: Clock;
  /**
   * Real monotonic time for the pacer and the keyed limits (performance.now by default): the
   * pacer spaces socket writes with real timers even when a test fakes the scheduler's clock
   * (delivery/dispatcher.ts, beforeBody), and the API's buckets and SMTP AUTH's failure
   * windows have always read it.
   */
  realTime?: () => number;
  /** A wake-up listener threw (it should only schedule work). Default: ignored, as OutboxSignal does. */
  onListenerError?: (err: unknown, topic: WakeTopic) => void;
}

export class LocalCoordination implements Coordination {
  readonly nodeId: string;
  private readonly clock: Clock;
  private readonly realTime: () => number;
  private readonly wakeups: LocalWakeups;
  private readonly leases: LeaseTable;
  private readonly rates = new Map<string, Named<SharedRate>>();
  private readonly pacers = new Map<string, Named<SharedPacer>>();
  private readonly keyedRates = new Map<string, Named<KeyedRate>>();
  private readonly failureWindows = new Map<string, Named<FailureWindow>>();
  private readonly slotSets = new Map<string, LocalSlots>();
  private readonly entrySets = new Map<string, LocalExpiringEntries>();
  private readonly counterSets = new Map<string, LocalCounters>();

  constructor(o: LocalCoordinationOptions) {
    if (!isNodeId(o.nodeId)) throw new Error(`not a node id: ${JSON.stringify(o.nodeId)}`);
    this.nodeId = o.nodeId;
    this.clock = o.clock ?? systemClock();
    this.realTime = o.realTime ?? (() => performance.now());
    this.wakeups = new LocalWakeups(o.onListenerError);
    this.leases = new LeaseTable({ owner: o.nodeId, now: () => this.clock.monotonic() });
  }

  /** The coordination of the daemon on `dataDir`, under the folder's node id (node-id.ts). */
  static forDataDir(dataDir: string, o: Omit<LocalCoordinationOptions, 'nodeId'> = {}): LocalCoordination {
    return new LocalCoordination({ ...o, nodeId: loadNodeId(dataDir) });
  }

  wake(topic: WakeTopic): void {
    this.wakeups.wake(topic);
  }

  onWake(topic: WakeTopic, fn: () => void): () => void {
    return this.wakeups.onWake(topic, fn);
  }

  /** One process is the whole service: no other node can be gone. */
  async nodesGone(_staleMs: number): Promise<string[]> {
    return [];
  }

  async lead(task: LeaderTask, ttlMs: number): Promise<Lease | null> {
    return this.leases.take(task, ttlMs); // a task has no "/": never a backlog part's name
  }

  async own(backlog: Backlog, key: string, ttlMs: number): Promise<Lease | null> {
    return this.leases.take(`${backlog}/${key}`, ttlMs);
  }

  rate(name: string, o: RateOptions): SharedRate {
    return named(this.rates, 'rate', name, o, () => localRate(new RateLimiter({ rate: o.perSecond, burst: o.burst, now: () => this.clock.monotonic() })));
  }

  pacer(name: string, o: PacerOptions): SharedPacer {
    return named(this.pacers, 'pacer', name, o, () => new Pacer({ rate: o.perSecond, marginMs: o.marginMs, now: this.realTime }));
  }

  keyedRate(name: string, o: KeyedRateOptions): KeyedRate {
    return named(this.keyedRates, 'keyed rate', name, o, () => {
      const buckets = new KeyBuckets({ ...o, now: this.realTime });
      return { take: async (key: string) => buckets.take(key) };
    });
  }

  failures(name: string, o: FailureWindowOptions): FailureWindow {
    return named(this.failureWindows, 'failure window', name, o, () => new LocalFailureWindow({ ...o, now: this.realTime }));
  }

  slots(name: string): Slots {
    let s = this.slotSets.get(name);
    if (!s) this.slotSets.set(name, (s = new LocalSlots()));
    return s;
  }

  entries(name: string): ExpiringEntries {
    let e = this.entrySets.get(name);
    if (!e) this.entrySets.set(name, (e = new LocalExpiringEntries()));
    return e;
  }

  counters(name: string): Counters {
    let c = this.counterSets.get(name);
    if (!c) this.counterSets.set(name, (c = new LocalCounters(() => this.clock.monotonic())));
    return c;
  }
}

/** RateLimiter with the port's atomic tryTake (one synchronous check and take). */
function localRate(limiter: RateLimiter): SharedRate {
  return {
    rate: limiter.rate,
    burst: limiter.burst,
    available: () => limiter.available(),
    take: (n) => limiter.take(n),
    tryTake: (n) => {
      const granted = Math.max(0, Math.min(Math.floor(n), limiter.available()));
      limiter.take(granted);
      return granted;
    },
    msUntilAvailable: () => limiter.msUntilAvailable(),
  };
}
