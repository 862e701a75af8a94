/**
 * Picks the source of each attempt from its pool (issue 35) by smooth weighted round robin, as
 * nginx's upstream module does: every pick adds each candidate's weight to its running score,
 * takes the highest score (the first in pool order on a tie) and subtracts the candidates'
 * total weight from it. Over any run of total-weight picks each source is picked exactly its
 * weight's number of times, spread out rather than in bursts (3:1 gives a a b a, not a a a b),
 * and the sequence is deterministic, so tests can expect exact counts.
 *
 * A source marked unavailable (warm-up cap, shaping suspension, a failing address: the issue's
 * later parts) is skipped: the others share its turns by their weights, and its score stays
 * where it was until it comes back.
 */
import type { PoolMember } from './sending-ips.js';

export class SourceChooser {
  /** Running scores per pool, per source name. */
  private readonly scores = new Map<string, Map<string, number>>();

  /**
   * The source to use for the next attempt from `pool`, or undefined when every member is
   * unavailable (the attempt then waits, as for a full site).
   */
  pick(pool: string, members: readonly PoolMember[], available: (source: string) => boolean = () => true): string | undefined {
    let scores = this.scores.get(pool);
    if (!scores) this.scores.set(pool, (scores = new Map()));
    let total = 0;
    let best: string | undefined;
    let bestScore = -Infinity;
    for (const m of members) {
      if (!available(m.source)) continue;
      const score = (scores.get(m.source) ?? 0) + m.weight;
      scores.set(m.source, score);
      total += m.weight;
      if (score > bestScore) {
        best = m.source;
        bestScore = score;
      }
    }
    if (best !== undefined) scores.set(best, bestScore - total);
    return best;
  }
}
