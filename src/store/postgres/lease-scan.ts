/**
 * QueuePort.lease (store/port/queue.ts): due jobs leased in due order, each with the next
 * generation of its lease, in one transaction.
 *
 * 1. The due index (jobs_due: (due_at, id) INCLUDE (domain, channel_id) WHERE state='queued')
 *    is read up to now, from the round-robin cursor on, a chunk at a time and at most scanLimit
 *    entries in all: no row lock, and acceptDomain and the deleted-channel check are answered
 *    from the index alone.
 * 2. The entries are walked in due order exactly as the LMDB engine walks its jobsDue (the same
 *    skipped / discarded / scanLimit / resumeAfter bookkeeping). A job the walk wants is locked
 *    with SELECT ... FOR UPDATE SKIP LOCKED, a few at a time (as many as are still wanted), and
 *    its doc read for `accept`.
 * 3. The accepted ones are leased by one UPDATE; due jobs of deleted channels are deleted.
 *
 * Atomic across nodes (READ COMMITTED): a job is leased only under its row lock, taken with
 * SKIP LOCKED and with state='queued' re-checked on the row's latest version, so two leasers on
 * any nodes never get the same job: the second skips a row the first holds, or (once the first
 * committed) finds it no longer queued. A row another leaser holds is simply not examined any
 * further (as a job it took), and a leaser never waits for another.
 */
import type { DeliveryJob } from '../../domain/types.js';
import type { DueKey, LeasedJob, LeaseOptions, LeaseResult } from '../port/queue.js';
import type { Tx } from './client.js';
import type { PgContext } from './context.js';
import { iso, leasedJob, type LeasedRow } from './queue-rows.js';

interface DueEntry {
  id: string;
  due_at: number;
  domain: string;
  channel_id: string;
  /** The channel's purge is pending (its deletion committed), whether or not this node heard of it. */
  gone: boolean;
}

export async function leaseJobs(ctx: PgContext, o: LeaseOptions): Promise<LeaseResult> {
  if (o.max <= 0) return { jobs: [], skipped: 0, discarded: 0 };
  const scanLimit = o.scanLimit ?? Math.max(500, o.max * 20);
  return ctx.begin(async (tx) => {
    const walk = new LeaseWalk(tx, o, scanLimit, (e) => e.gone || ctx.deletedChannels.has(e.channel_id));
    await walk.run();
    const discarded = await discardDue(tx, walk.discard);
    const jobs = await leaseRows(tx, o, walk.take);
    const truncated = walk.examined >= scanLimit && jobs.length < o.max;
    return { jobs, skipped: walk.skipped, discarded, resumeAfter: truncated ? walk.last : undefined };
  });
}

/** Due entries read per statement at least: most calls find their jobs in the first read. */
const MIN_CHUNK = 64;

/** Due entries in due order, strictly after `after`, read from the due index. */
async function dueEntries(tx: Tx, nowMs: number, limit: number, after: DueKey | undefined): Promise<DueEntry[]> {
  // channel_purges (the channels group's) holds a row per deleted channel whose data is not
  // purged yet: read once per statement (an InitPlan), usually empty.
  return tx<DueEntry[]>`
    SELECT id, due_at, domain, channel_id,
      channel_id = ANY(ARRAY(SELECT p.channel_id FROM channel_purges p)) AS gone
    FROM jobs
    WHERE state = 'queued' AND due_at <= ${nowMs}
      ${after ? tx`AND (due_at, id) > (${after[0]}::int8, ${after[1]}::text)` : tx``}
    ORDER BY due_at, id
    LIMIT ${limit}`;
}

/**
 * The walk over the due entries (the LMDB engine's loop over jobsDue), reading the due index a
 * chunk at a time (up to scanLimit in all) and locking the rows it needs as it goes.
 */
class LeaseWalk {
  readonly take: DeliveryJob[] = [];
  readonly discard: string[] = [];
  skipped = 0;
  examined = 0;
  last: DueKey | undefined;
  /** Rows locked so far (id → doc); ids asked for and not got are absent from it. */
  private readonly locked = new Map<string, DeliveryJob>();
  private readonly asked = new Set<string>();

  constructor(
    private readonly tx: Tx,
    private readonly o: LeaseOptions,
    private readonly scanLimit: number,
    private readonly deleted: (e: DueEntry) => boolean,
  ) {}

  private get stopped(): boolean {
    return this.take.length >= this.o.max || this.examined >= this.scanLimit;
  }

  async run(): Promise<void> {
    let after = this.o.after;
    while (!this.stopped) {
      const ask = Math.min(this.scanLimit - this.examined, Math.max(MIN_CHUNK, 4 * (this.o.max - this.take.length)));
      const entries = await dueEntries(this.tx, this.o.nowMs, ask, after);
      await this.walk(entries);
      if (entries.length < ask) return;
      after = this.last;
    }
  }

  private async walk(entries: DueEntry[]): Promise<void> {
    for (const [i, e] of entries.entries()) {
      if (this.stopped) return;
      this.examined++;
      this.last = [e.due_at, e.id];
      if (!this.wanted(e)) continue;
      if (!this.asked.has(e.id)) await this.lockFrom(entries, i);
      const job = this.locked.get(e.id);
      if (!job) continue; // another leaser holds it, or it is no longer queued
      if (this.o.accept && !this.o.accept(job)) {
        this.skipped++;
        continue;
      }
      this.take.push(job);
    }
  }

  /** acceptDomain and the channel, from the index entry alone: counts what it refuses. */
  private wanted(e: DueEntry): boolean {
    if (this.o.acceptDomain && !this.o.acceptDomain(e.domain)) {
      this.skipped++;
      return false;
    }
    // The channel was deleted (its tombstone committed before the DELETE's 204): nothing of it
    // is sent any more; its job goes now rather than when the purge reaches it.
    if (this.deleted(e)) {
      this.discard.push(e.id);
      return false;
    }
    return true;
  }

  /**
   * Locks the next wanted rows from entries[i] on: as many as leases are still wanted, so that
   * a leaser does not hold rows it will not lease while other leasers look for work.
   */
  private async lockFrom(entries: DueEntry[], i: number): Promise<void> {
    const want = this.o.max - this.take.length;
    const ids: string[] = [];
    for (const e of entries.slice(i)) {
      if (ids.length >= want) break;
      if (this.asked.has(e.id) || (this.o.acceptDomain && !this.o.acceptDomain(e.domain)) || this.deleted(e)) continue;
      ids.push(e.id);
      this.asked.add(e.id);
    }
    const rows = await this.tx<{ id: string; doc: DeliveryJob }[]>`
      SELECT id, doc FROM jobs WHERE id = ANY(${ids}::text[]) AND state = 'queued' AND due_at <= ${this.o.nowMs}
      FOR UPDATE SKIP LOCKED`;
    for (const r of rows) this.locked.set(r.id, r.doc);
  }
}

/** Due jobs of deleted channels: deleted (those no other transaction holds; the next scan finds the rest). */
async function discardDue(tx: Tx, ids: string[]): Promise<number> {
  if (ids.length === 0) return 0;
  const rows = await tx`
    DELETE FROM jobs WHERE id = ANY(ARRAY(
      SELECT id FROM jobs WHERE id = ANY(${ids}::text[]) AND state = 'queued' FOR UPDATE SKIP LOCKED))
    RETURNING id`;
  return rows.length;
}

/** The taken rows (locked by this transaction) leased to o.owner; returned in due order. */
async function leaseRows(tx: Tx, o: LeaseOptions, take: DeliveryJob[]): Promise<LeasedJob[]> {
  if (take.length === 0) return [];
  const untilMs = o.nowMs + o.leaseMs;
  const rows = await tx<LeasedRow[]>`
    UPDATE jobs SET state = 'leased', lease_owner = ${o.owner}, lease_generation = lease_generation + 1, lease_until = ${untilMs},
      doc = doc || jsonb_build_object('state', 'leased', 'leaseUntil', ${iso(untilMs)}::text)
    WHERE id = ANY(${take.map((j) => j.id)}::text[])
    RETURNING id, lease_owner, lease_generation, doc`;
  const byId = new Map(rows.map((r) => [r.id, r]));
  return take.flatMap((j) => {
    const row = byId.get(j.id);
    return row ? [leasedJob(row)] : [];
  });
}
