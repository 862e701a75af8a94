/**
 * Per-site concurrency across the nodes of a cluster (issue 32): a site's sessions are counted
 * by every node together, not per node, so two nodes never open twice a site's limit.
 *
 * The dispatcher plans with its own SiteConcurrency (synchronous, in memory: what this node has
 * in flight, at most the site's limit); in cluster mode each attempt also takes a hold of the
 * site's key in the shared slots (coordination/port.ts Slots: one conditional upsert of the
 * key's row in PostgreSQL) before it connects, and gives it back when its SMTP part ends. While
 * the other nodes use the rest of the site's budget the attempt waits for a hold, asking again
 * every RETRY_MS or so: it keeps its place in this node's count (so the node starts no more for
 * that site meanwhile) and its rate token (the attempt is started, only later), so waiting
 * wastes no part of the processing rate. A hold given back stays with the node for SPARE_MS,
 * for its next attempt to the site (no round trip under load). Holds of a node that crashed
 * expire (HOLD_TTL_MS) instead of taking the site's slots for good.
 *
 * What stays per node (docs/architecture.md): the site a domain belongs to is learned by each
 * node's own MX lookups, so until a node has looked a domain up its first attempt takes its hold
 * under the domain's name (one at a time, the probe of site-concurrency.ts); its MX lookup then
 * names the site, and before it connects the hold moves to the site's key (moveHold, called by
 * the dispatcher's siteRoom), waiting like any attempt while the other nodes use the site's
 * budget: without that move a node restarted while the others held the site's limit opened one
 * session more (4 at a site of 3). A site's "slow down" feedback lowers the limit this node asks
 * with, not the other nodes'.
 *
 * One node (no shared slots): nothing here runs, and an attempt costs no extra round trip.
 */
import { setTimeout as delay } from 'node:timers/promises';
import type { Logger } from '../log/logger.js';
import type { SlotHold, Slots } from '../coordination/port.js';

/** About how often a waiting attempt asks again (the other nodes' releases wake no one here). */
export const RETRY_MS = 250;
/**
 * How long a hold given back stays with this node for its next attempt to the same site. Under
 * load the next job of a site starts within milliseconds of the last one's end: it takes the
 * spare hold without a round trip, so a busy site costs two statements per spare's life instead
 * of two per message (bench cluster: 2 of the 6 commits per delivered message). The other nodes
 * wait at most this long more for a session this node no longer uses.
 */
export const SPARE_MS = 100;

interface Spare {
  hold: SlotHold;
  timer: NodeJS.Timeout;
}

export class ClusterSites {
  /** Holds given back and kept for a moment, per site key (see SPARE_MS). */
  private readonly spares = new Map<string, Spare[]>();

  constructor(
    private readonly slots: Slots | undefined,
    private readonly logger: Logger,
  ) {}

  /** Whether sessions are counted across nodes (cluster mode). */
  get shared(): boolean {
    return this.slots !== undefined;
  }

  /**
   * A hold of one of `key`'s sessions for an attempt about to connect, once fewer than
   * limit() are held on all nodes together; null when `signal` ended the wait first (shutdown,
   * the attempt's deadline). limit() is read at each try: a "slow down" reply changes it.
   * A store that cannot be reached counts as a full site (the node could not record the outcome
   * either): the attempt waits.
   */
  async hold(key: string, limit: () => number, signal: AbortSignal): Promise<SlotHold | null> {
    const slots = this.slots;
    if (!slots) throw new Error('ClusterSites.hold needs shared slots');
    const spare = this.takeSpare(key);
    if (spare) return spare;
    let warned = false;
    while (!signal.aborted) {
      const hold = await slots.acquire(key, limit()).catch((err: unknown) => {
        if (!warned) this.logger.warn({ err, site: key }, 'shared site slots unavailable; the attempt waits');
        warned = true;
        return null;
      });
      if (hold) return hold;
      // Spread out, so that the waiters of several nodes do not ask in step.
      await delay(RETRY_MS * (0.5 + Math.random()), undefined, { signal }).catch(() => undefined);
    }
    return null;
  }

  /**
   * An attempt's hold under `key` instead of `hold`'s: the attempt learned its site after it took
   * `hold` (under the domain's name, before this node knew the site: its MX lookup named it). A
   * hold of `key` is asked for as hold() does, and `hold` is given back only once it is granted:
   * until then the attempt holds both and does not connect, so the site's sessions on all nodes
   * stay within its limit. null when `signal` ended the wait (`hold` is still the attempt's, given
   * back as it ends). `hold` itself when its key is `key` already.
   */
  async moveHold(hold: SlotHold, key: string, limit: () => number, signal: AbortSignal): Promise<SlotHold | null> {
    if (hold.key === key) return hold;
    const moved = await this.hold(key, limit, signal);
    if (moved) this.release(hold);
    return moved;
  }

  /** Gives a hold back: kept for this node's next attempt to the site for SPARE_MS, then free for any node. */
  release(hold: SlotHold): void {
    const list = this.spares.get(hold.key) ?? [];
    const spare: Spare = { hold, timer: setTimeout(() => this.dropSpare(spare), SPARE_MS) };
    spare.timer.unref();
    list.push(spare);
    this.spares.set(hold.key, list);
  }

  /** Gives every spare hold back now (the dispatcher stops). */
  async close(): Promise<void> {
    const all = [...this.spares.values()].flat();
    this.spares.clear();
    for (const s of all) clearTimeout(s.timer);
    await Promise.all(all.map((s) => this.giveBack(s.hold)));
  }

  private takeSpare(key: string): SlotHold | undefined {
    const list = this.spares.get(key);
    const spare = list?.pop();
    if (!spare) return undefined;
    if (list!.length === 0) this.spares.delete(key);
    clearTimeout(spare.timer);
    return spare.hold;
  }

  private dropSpare(spare: Spare): void {
    const list = this.spares.get(spare.hold.key);
    const i = list?.indexOf(spare) ?? -1;
    if (i < 0) return;
    list!.splice(i, 1);
    if (list!.length === 0) this.spares.delete(spare.hold.key);
    void this.giveBack(spare.hold);
  }

  private giveBack(hold: SlotHold): Promise<void> {
    return hold.release().catch((err: unknown) => {
      // The coordination gives it back once PostgreSQL answers again (slots.ts, owed holds), at
      // the latest it expires (HOLD_TTL_MS); until then the site counts one session too many.
      this.logger.warn({ err, site: hold.key }, 'shared site slot could not be given back now; it is given back once the database answers');
    });
  }
}
