/**
 * The coordination port: what today lives in one process's memory and must be shared once
 * several nodes serve one database (issue 31; docs/architecture.md, "Storage engines and cluster
 * mode"). The store port keeps the data; this port keeps who does what, now:
 *
 *  - wake-ups: "new work was committed" (queue, outbox, broadcasts, purges), so that the node
 *    whose dispatcher sleeps looks at once instead of at its idle check;
 *  - the node's identity, which queue leases, leadership and backlog claims carry;
 *  - leadership of work one node must do at a time (retention sweep, channel purge, domain
 *    recheck, TLS-RPT daily reports), and ownership of a shared backlog's parts (a broadcast's
 *    expansion, a node's unfinished messages), both as leases with a fencing generation;
 *  - shared rates (the attempt limiter and the Pacer of delivery.rate, API-key and
 *    auth-failure limits, SMTP AUTH's failure windows) and slots (per-site concurrency), which
 *    must hold for the cluster as a whole, not per node.
 *
 * Implementations: coordination/local.ts for one node (today's behaviour, in memory);
 * cluster mode adds a PostgreSQL one (LISTEN/NOTIFY as graphile-worker wakes its workers,
 * lease rows with a generation, shared GCRA rows as KumoMTA's redis throttles). What each
 * method must guarantee there is written at the method.
 *
 * Rules every implementation follows:
 *  - Methods that a cluster answers over the network are async; the few that delivery calls in
 *    its synchronous hot loop (a rate's available/take, the pacer's take) stay synchronous and
 *    read the node's share of the cluster's budget, reserved ahead (see SharedRate).
 *  - A wake-up is a hint, never the work: receivers must still find their work in the store on
 *    their own idle check, because a cluster may lose a notification (a dropped LISTEN
 *    connection) and a local listener may be added after the wake.
 *  - Leases are exclusive per holder, not per node: two components of one node asking for one
 *    task do not both get it.
 */

/** Wake-up topics: each names a kind of committed work and the component that runs it. */
export type WakeTopic =
  /** Delivery jobs became due (a send committed, a message finished, a retry requested). */
  | 'queue'
  /** Webhook outbox entries were committed (the webhook dispatcher). */
  | 'outbox'
  /** A broadcast was accepted (the broadcast expander). */
  | 'broadcasts'
  /** A channel was deleted and its data waits for the purge (the channel purger). */
  | 'purges';

/** Work that one node at a time does for the whole service. */
export type LeaderTask =
  | 'retention-sweep'
  | 'channel-purge'
  | 'domain-recheck'
  | 'tls-rpt-reports'
  /** The first start's account and key (bootstrap.ts): one node makes them, however many start at once on an empty store. */
  | 'bootstrap';

/**
 * Shared backlogs whose parts are owned by one node at a time: a broadcast's expansion (key:
 * the broadcast id), a node's messages committed unfinished (key: the node id whose finishing
 * stage committed them; another node takes them over once that claim lapsed).
 */
export type Backlog = 'broadcast-expansion' | 'finishing';

/**
 * A lease: leadership of a task, or ownership of one part of a backlog, until it expires.
 * The holder renews it while it works (at least once per ttl) and stops as soon as a renewal
 * fails: another holder may have it by then.
 */
/** A cluster node without a heartbeat this long is gone (coordination/postgres/heartbeats.ts beats every 5 s): what Coordination.nodesGone is asked with. */
export const NODE_GONE_MS = 30_000;

export interface Lease {
  /** The task, or `backlog/key`. */
  readonly name: string;
  /** The node that holds it (Coordination.nodeId). */
  readonly owner: string;
  /**
   * Fencing token: grows by one each time the lease goes to a new holder (never on a renewal),
   * so a write made under an older generation can be told from one made under this one.
   */
  readonly generation: number;
  /**
   * Extends the lease by its ttl from now. False when it was lost (it expired and another
   * holder took it, or it was released): the work must stop, its writes are no longer ours.
   * Cluster: one conditional UPDATE ... WHERE generation = ours.
   */
  renew(): Promise<boolean>;
  /** Gives it up at once, so the next holder need not wait for the ttl. No-op once lost. */
  release(): Promise<void>;
}

/**
 * An attempt budget, token bucket plus a 1-second sliding window (queue/rate-limiter.ts's
 * RateLimiter): the operations delivery's dispatcher calls in its synchronous loop.
 *
 * Cluster: the budget is one row (GCRA, as KumoMTA's shared throttles); each node reserves a
 * small block of it ahead in the background with one atomic UPDATE ... RETURNING and these
 * synchronous calls spend only what the node has reserved, so the nodes together never exceed
 * the budget in any window (a node that idles gives its block back when the block's time ends).
 */
export interface SharedRate {
  readonly rate: number;
  readonly burst: number;
  /** How many starts may happen right now (on this node). */
  available(): number;
  /** Records n starts now; n must not exceed available(). */
  take(n: number): void;
  /** Takes up to n now, atomically, and answers how many were taken (racing callers never get more than the budget together). */
  tryTake(n: number): number;
  /** Milliseconds until available() is at least 1 (0 when it already is). */
  msUntilAvailable(): number;
}

/**
 * Evenly spaced slots for the moment a message reaches its receiver (queue/rate-limiter.ts's
 * Pacer, GCRA): at most `rate` messages in any 1-second window at the receivers.
 * Cluster: one theoretical-arrival-time row advanced atomically; nodes reserve their next
 * few slot times ahead, so take() stays synchronous.
 */
export interface SharedPacer {
  /** Per second, on average, when busy (below the rate by the pacer's margin). */
  readonly effectiveRate: number;
  /** Takes a slot now if one is free (0: send now), else answers the ms until the next one and takes nothing. */
  take(): number;
}

/** One answer of a keyed limit (http/rate-limit.ts's RateDecision: the RateLimit-* headers). */
export interface RateDecision {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Seconds until the bucket is full again (or, when refused, until one request is allowed). */
  resetSeconds: number;
}

/**
 * Token buckets per key (an API key, a client address): `limit` requests per `windowMs`, one
 * coming back every windowMs / limit. Cluster: one row per key updated with a single
 * conditional UPDATE ... RETURNING, so two nodes taking the last token cannot both get it.
 */
export interface KeyedRate {
  take(key: string): Promise<RateDecision>;
}

/**
 * Failures per key in a sliding window (SMTP AUTH's throttle, smtp/throttle.ts): a key is
 * blocked while `limit` of its failures lie within the last windowMs, and a success may forget
 * them. Unlike KeyedRate it counts only what the caller reports (failures, not requests), and
 * the caller asks before it counts. Cluster: one row per (name, key) holding the times of its
 * last `limit` failures, appended and trimmed by one UPDATE; reached() reads that row.
 */
export interface FailureWindow {
  /** True while `limit` failures of `key` lie within the window. */
  reached(key: string): Promise<boolean>;
  /** Records one failure of `key` now. */
  add(key: string): Promise<void>;
  /** Forgets the failures of `key`. */
  clear(key: string): Promise<void>;
}

/** A slot held; released once (further calls do nothing). */
export interface SlotHold {
  readonly key: string;
  release(): Promise<void>;
}

/**
 * Counted slots per key (an MX site's sessions): at most `limit` holds per key at once.
 * Cluster: a hold is a row (or a sorted-set member, as KumoMTA's shared connection limits) with
 * an expiry the holder renews, inserted only while fewer than `limit` live rows exist for the
 * key, under a row lock on the key; a crashed node's holds expire instead of leaking.
 */
export interface Slots {
  /**
   * Takes a slot of `key` if fewer than `limit` are held now, atomically: of racing callers
   * at most limit - held succeed, the others get null. `limit` is read per call, because a
   * site's concurrency changes (its "slow down" feedback).
   */
  acquire(key: string, limit: number): Promise<SlotHold | null>;
  /** Slots of `key` held now (metrics, GET /queue). */
  held(key: string): Promise<number>;
}

/** One entry of ExpiringEntries: its key, the caller's value (JSON text) and its expiry. */
export interface SharedEntry {
  key: string;
  value: string;
  /** Epoch milliseconds (wall clock) after which it no longer exists. */
  until: number;
}

/**
 * Shared entries that expire (an automatic shaping rule's suspension of a source at a site,
 * issue 35): what one node decided for a while, which every node must honour until it ends.
 * Times are the wall clock's epoch milliseconds given by the caller, not the coordination's
 * clock, because a person reads them ("suspended until 14:05") and a few seconds' difference
 * between nodes' clocks moves an expiry of minutes or hours by only as much.
 * Cluster: one row per (name, key) written with one upsert; the janitor drops expired rows.
 */
export interface ExpiringEntries {
  /** Creates or replaces the entry of `key` until `until`. */
  set(key: string, value: string, until: number): Promise<void>;
  /** Every entry whose `until` is after `now`. */
  list(now: number): Promise<SharedEntry[]>;
  /** Deletes the entry of `key` at once; false when there was none (or it had expired by `now`). */
  delete(key: string, now: number): Promise<boolean>;
}

/** One key of an add: its cap, and how long from now the key lives (its window's end). */
export interface CounterLimit {
  key: string;
  /** The most the key may count; an add that would pass it adds nothing to any key. */
  cap: number;
  /** Milliseconds from now until the key's window ends: the key then reads 0 and its row may go. */
  ttlMs: number;
}

/** The answer of Counters.add: whether it added, and every key's count after it (or as found, when refused). */
export interface CounterAnswer {
  added: boolean;
  /** In the order of the limits asked. */
  counts: number[];
}

/**
 * Counts per key within windows the caller names (a warm-up's messages per source, site and day
 * or hour: the window is part of the key, its end the key's ttl). Unlike Slots nothing is given
 * back: a count only grows until its key expires. Cluster: one row per (name, key); add() locks
 * the rows of its keys in key order (no deadlock between two adds of one set), checks every cap
 * and updates all or none in one transaction, so racing adders on every node never pass a cap
 * together; the janitor drops expired rows.
 */
export interface Counters {
  /** Adds 1 to every key of `limits` if each stays within its cap, else adds nothing; atomic. */
  add(limits: readonly CounterLimit[]): Promise<CounterAnswer>;
  /** The live keys of the name with their counts (expired keys are left out). */
  read(): Promise<Map<string, number>>;
}

export interface RateOptions {
  /** Starts per second. */
  perSecond: number;
  /** Starts allowed at once; default a tenth of the rate, at least 1. */
  burst?: number;
}

export interface PacerOptions {
  /** Messages per second at the receivers, at most, in any 1-second window. */
  perSecond: number;
  /** Default PACER_MARGIN_MS (queue/rate-limiter.ts). */
  marginMs?: number;
}

export interface KeyedRateOptions {
  limit: number;
  windowMs: number;
}

export interface FailureWindowOptions {
  /** Failures within the window that block the key. */
  limit: number;
  windowMs: number;
}

/**
 * The port. Named objects (rate, pacer, keyedRate, slots) are shared by name: every caller of
 * one name, on any node, spends from one budget; the options of a name must be the same
 * everywhere (a second call with other options is a configuration error and throws).
 */
export interface Coordination {
  /**
   * This node's identity: stable across restarts of one node (a restart takes back the
   * leases this node held before), unique among the live nodes of a cluster.
   */
  readonly nodeId: string;

  /**
   * Tells every node's listeners of `topic` (this node's included) that work was committed.
   * Call it after the write's verb resolved. Never throws and never waits: a cluster sends
   * the NOTIFY in the background (or the engine sends it inside the committing transaction),
   * and a lost notification only delays the work until the receiver's idle check.
   */
  wake(topic: WakeTopic): void;

  /**
   * Calls `fn` on each wake-up of `topic` (from any node). `fn` only schedules work (it runs
   * synchronously inside wake() in the local implementation) and must not throw; wake-ups may
   * be coalesced. Returns the unsubscribe function.
   */
  onWake(topic: WakeTopic, fn: () => void): () => void;

  /**
   * Leadership of `task` for ttlMs, or null while another holder has a live lease. Atomic:
   * of racing callers on all nodes at most one gets a lease. Cluster: an insert-or-update of
   * the task's lease row WHERE it is expired (or absent), generation + 1, RETURNING.
   */
  lead(task: LeaderTask, ttlMs: number): Promise<Lease | null>;

  /**
   * Ownership of one part of a shared backlog for ttlMs, or null while another holder has it.
   * The same lease rules as lead(), per (backlog, key).
   */
  own(backlog: Backlog, key: string, ttlMs: number): Promise<Lease | null>;

  /**
   * Nodes that stopped without a clean stop: no heartbeat for staleMs (a cluster node beats
   * every few seconds while it runs and removes its row when it stops cleanly). Delivery takes
   * their queue leases back at once instead of at the leases' expiry, so a dead node strands
   * nothing for long. Never this node. One node alone: none.
   */
  nodesGone(staleMs: number): Promise<string[]>;

  /** The shared attempt budget `name`. */
  rate(name: string, o: RateOptions): SharedRate;

  /** The shared pacer `name`. */
  pacer(name: string, o: PacerOptions): SharedPacer;

  /** The shared keyed limit `name` (API keys, auth failures per address). */
  keyedRate(name: string, o: KeyedRateOptions): KeyedRate;

  /** The shared failure window `name` (SMTP AUTH failures per address, per user name and address). */
  failures(name: string, o: FailureWindowOptions): FailureWindow;

  /** The shared slots `name` (per-site concurrency). */
  slots(name: string): Slots;

  /** The shared expiring entries `name` (automatic shaping's suspensions and ceilings). */
  entries(name: string): ExpiringEntries;
  /** The shared counters `name` (a warming source's messages per site and day or hour). */
  counters(name: string): Counters;
}
