/**
 * The cluster coordination (port.ts) on PostgreSQL, for several postrider nodes sharing one
 * database (issue 32): the nodes' daemons each make one, on the store's database and schema,
 * with the node id of their data folder (node-id.ts). What each method guarantees across nodes
 * is written at the port; how each part keeps it, at its file:
 *
 *  - wake-ups: NOTIFY/LISTEN on the schema's channel (wakeups.ts);
 *  - leadership and backlog parts: lease rows with generations from one sequence (leases.ts);
 *  - the attempt budget and the pacer: rows changed under their row lock by SQL functions
 *    (rate-sql.ts, pacer.ts), reached synchronously through a worker thread (bridge.ts), the
 *    attempt budget in blocks reserved ahead (rates.ts);
 *  - keyed limits, failure windows and slots: one row per key changed by one conditional
 *    statement (key-rates.ts, failure-windows.ts, slots.ts), counters by one transaction under
 *    row locks (counters.ts), and the janitor that drops the
 *    rows that mean nothing any more (janitor.ts).
 *
 * A component: start() creates the tables if needed (schema.ts), listens and starts the
 * janitor and the slot renewals; stop() gives back what this node holds (its leases, its slot
 * holds, its rate blocks), stops listening and closes its connections.
 */
import { randomUUID } from 'node:crypto';
import type { Clock, Timer } from '../../queue/clock.js';
import { guarded } from '../../domain/database-unavailable.js';
import { named, type Named } from '../named.js';
import { isNodeId } from '../node-id.js';
import type { Backlog, Coordination, Counters, ExpiringEntries, FailureWindow, FailureWindowOptions, KeyedRate, KeyedRateOptions, LeaderTask, Lease, PacerOptions, RateOptions, SharedPacer, SharedRate, Slots, WakeTopic } from '../port.js';
import { SyncBridge } from './bridge.js';
import { openPool, volatileSettings, type Sql } from './connection.js';
import { PgCounters } from './counters.js';
import { PgExpiringEntries } from './expiring-entries.js';
import { PgFailureWindow } from './failure-windows.js';
import { BeatRun, beat, forget, goneNodes, HEARTBEAT_EVERY_MS } from './heartbeats.js';
import { JANITOR_EVERY_MS, sweep } from './janitor.js';
import { PgKeyedRate } from './key-rates.js';
import { PgLeases } from './leases.js';
import { PgSharedPacer } from './pacer.js';
import { PgSharedRate } from './rates.js';
import { ensureSchema } from './schema.js';
import { HOLD_TTL_MS, OWED_RETRY_MS, PgSlots, releaseAll, releaseOwed, renewAll, type HoldRegistry, type OwedReleases } from './slots.js';
import { coordinationTime, type CoordinationTime } from './time.js';
import { PgWakeups, wakeChannel } from './wakeups.js';

export interface PostgresCoordinationOptions {
  /** The store's database. */
  url: string;
  /** The store's schema: the coordination's tables live beside the store's. */
  schema: string;
  /** This node's id (node-id.ts: the data folder's). */
  nodeId: string;
  /** Connections of the pool for the asynchronous methods (default 3); the LISTEN and the bridge have their own. */
  poolSize?: number;
  /**
   * Tests only: a fake clock whose monotonic time every query uses as its now and whose timers
   * run the renewals (time.ts). Default: the database's clock and real timers.
   */
  clock?: Clock;
  /** Longest a synchronous rate or pacer call blocks the event loop for the database (default 250 ms; bridge.ts). */
  syncTimeoutMs?: number;
  /** A background statement failed (a NOTIFY, a renewal, a block's return): logged, never thrown. */
  onError?: (err: unknown) => void;
  /** A wake-up listener threw (it should only schedule work). */
  onListenerError?: (err: unknown, topic: WakeTopic) => void;
}

export class PostgresCoordination implements Coordination {
  readonly nodeId: string;
  private readonly sql: Sql;
  /** Keyed limits and failure windows: commits that do not wait for the WAL flush (connection.ts). */
  private readonly volatileSql: Sql;
  private readonly time: CoordinationTime;
  private readonly onError: (err: unknown) => void;
  private readonly wakeups: PgWakeups;
  private readonly leases: PgLeases;
  private readonly bridge: SyncBridge;
  private readonly rates = new Map<string, Named<PgSharedRate>>();
  private readonly pacers = new Map<string, Named<SharedPacer>>();
  private readonly keyedRates = new Map<string, Named<KeyedRate>>();
  private readonly failureWindows = new Map<string, Named<FailureWindow>>();
  private readonly slotSets = new Map<string, Slots>();
  private readonly entrySets = new Map<string, ExpiringEntries>();
  private readonly counterSets = new Map<string, Counters>();
  private readonly holds: HoldRegistry = new Map();
  private readonly owedReleases: OwedReleases = new Map();
  private readonly timers = new Set<Timer>();
  /** Renewals and sweeps under way (settled() waits for them). */
  private readonly running = new Set<Promise<void>>();
  private stopped = false;
  /** This instance: a restart of the node is another run (heartbeats.ts). */
  private readonly run = randomUUID();
  /** This node's beats without a break (heartbeats.ts, BeatRun): whether it may judge others gone. */
  private readonly beats: BeatRun;

  constructor(private readonly o: PostgresCoordinationOptions) {
    if (!isNodeId(o.nodeId)) throw new Error(`not a node id: ${JSON.stringify(o.nodeId)}`);
    this.nodeId = o.nodeId;
    const connection = { url: o.url, schema: o.schema, applicationName: `postrider coordination ${o.nodeId}` };
    this.sql = openPool(connection, o.poolSize ?? 3);
    this.volatileSql = openPool(connection, 2, volatileSettings(connection));
    this.time = coordinationTime(o.clock);
    this.onError = o.onError ?? (() => {});
    this.wakeups = new PgWakeups(this.sql, wakeChannel(o.schema), this.onError, o.onListenerError);
    this.leases = new PgLeases(this.sql, o.nodeId, this.time);
    this.beats = new BeatRun(() => this.time.local());
    this.bridge = new SyncBridge({ ...connection, callTimeoutMs: o.syncTimeoutMs ?? 250, bootTimeoutMs: Math.max(2_000, o.syncTimeoutMs ?? 0), onError: this.onError });
  }

  async start(): Promise<void> {
    await ensureSchema(this.sql, this.o.schema);
    await this.beats.track(beat(this.sql, this.nodeId, this.run, this.time));
    await this.wakeups.start();
    this.every(HEARTBEAT_EVERY_MS, () => this.beats.track(beat(this.sql, this.nodeId, this.run, this.time)));
    this.every(HOLD_TTL_MS / 3, () => renewAll(this.volatileSql, this.holds, this.time));
    this.every(OWED_RETRY_MS, () => releaseOwed(this.volatileSql, this.owedReleases, this.time));
    this.every(JANITOR_EVERY_MS, () => sweep(this.sql, this.time));
  }

  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    for (const t of this.timers) t.cancel();
    await this.settled();
    for (const { value } of this.rates.values()) value.close();
    const releases = [this.leases.releaseAll(), releaseAll(this.volatileSql, this.holds), releaseOwed(this.volatileSql, this.owedReleases, this.time), forget(this.sql, this.nodeId, this.run)].map((p) => p.catch(this.onError));
    await Promise.all(releases);
    await this.wakeups.stop();
    await this.bridge.close();
    await Promise.all([this.sql.end({ timeout: 5 }), this.volatileSql.end({ timeout: 5 })]);
  }

  wake(topic: WakeTopic): void {
    this.wakeups.wake(topic);
  }

  onWake(topic: WakeTopic, fn: () => void): () => void {
    return this.wakeups.onWake(topic, fn);
  }

  async lead(task: LeaderTask, ttlMs: number): Promise<Lease | null> {
    return this.leases.take(task, ttlMs); // a task has no "/": never a backlog part's name
  }

  async own(backlog: Backlog, key: string, ttlMs: number): Promise<Lease | null> {
    return this.leases.take(`${backlog}/${key}`, ttlMs);
  }

  async nodesGone(staleMs: number): Promise<string[]> {
    if (!this.beats.unbrokenFor(staleMs)) return [];
    return goneNodes(this.sql, this.nodeId, staleMs, this.time);
  }

  rate(name: string, o: RateOptions): SharedRate {
    return named(this.rates, 'rate', name, o, () => {
      this.bridge.start(); // the worker boots while the rest of the daemon starts
      return new PgSharedRate(name, o, this.bridge, this.time);
    });
  }

  pacer(name: string, o: PacerOptions): SharedPacer {
    return named(this.pacers, 'pacer', name, o, () => {
      this.bridge.start();
      return new PgSharedPacer(name, o, this.bridge, this.time);
    });
  }

  keyedRate(name: string, o: KeyedRateOptions): KeyedRate {
    // Asked for every request: PostgreSQL out of reach answers 503 store_unavailable, not a 500.
    return named(this.keyedRates, 'keyed rate', name, o, () => {
      const rate = guarded(new PgKeyedRate(this.volatileSql, name, o, this.time));
      return { take: (key) => rate.take(dbKey(key)) };
    });
  }

  failures(name: string, o: FailureWindowOptions): FailureWindow {
    return named(this.failureWindows, 'failure window', name, o, () => {
      const w = guarded(new PgFailureWindow(this.volatileSql, name, o, this.time));
      return { reached: (key) => w.reached(dbKey(key)), add: (key) => w.add(dbKey(key)), clear: (key) => w.clear(dbKey(key)) };
    });
  }

  slots(name: string): Slots {
    let s = this.slotSets.get(name);
    if (!s) this.slotSets.set(name, (s = new PgSlots(this.volatileSql, name, this.holds, this.owedReleases, this.time)));
    return s;
  }

  entries(name: string): ExpiringEntries {
    let e = this.entrySets.get(name);
    // Durable commits (this.sql): a suspension written must survive the database's crash.
    if (!e) this.entrySets.set(name, (e = guarded(new PgExpiringEntries(this.sql, name))));
    return e;
  }

  counters(name: string): Counters {
    let c = this.counterSets.get(name);
    if (!c) this.counterSets.set(name, (c = guarded(new PgCounters(this.volatileSql, name, this.time, dbKey, (k) => JSON.parse(k) as string))));
    return c;
  }

  /** The LISTEN connection's server process id (tests: a dropped connection). */
  async listenerPid(): Promise<number | undefined> {
    return this.wakeups.pid();
  }

  /** Resolves once the renewals and sweeps started so far are done (tests: a renewal landed before time moves on). */
  async settled(): Promise<void> {
    await Promise.all(this.running);
  }

  /** Runs `work` every ms until stop(); a failure is reported and the next run comes all the same. */
  private every(ms: number, work: () => Promise<void>): void {
    const run = () => {
      this.timers.delete(timer);
      if (this.stopped) return;
      const done = work().catch(this.onError);
      this.running.add(done);
      void done.finally(() => this.running.delete(done));
      timer = this.time.setTimer(run, ms);
      this.timers.add(timer);
    };
    let timer = this.time.setTimer(run, ms);
    this.timers.add(timer);
  }

}

/**
 * A caller's key as a text column may hold it: keys are any string (SMTP AUTH's per-user key is
 * "address NUL user name", the user name chosen by the client), and PostgreSQL's text refuses
 * U+0000. JSON's escaping is injective, so two keys never share a row.
 */
function dbKey(key: string): string {
  return JSON.stringify(key);
}
