/**
 * Retention's rule for outbound messages (config `retention.days`; the engines' sweeps,
 * store/lmdb/retention.ts and store/postgres/event-log.ts, apply it): nothing of a message that
 * is not finished leaves the store. While a job of it is open (scheduled, queued, leased,
 * deferred and retrying) or it waits to be composed or signed, and for retention.days after its
 * last job ended (`finishedAt`), its `accepted` event holds the sweep: the log's floor stops
 * there (it moves from the low end only), so the message keeps its events, its place in the
 * message list, its record and body, and the events recorded after it wait too.
 */

/** What of a message retention looks at. `finishedAt` is absent on one finished at its commit (sandbox, all suppressed). */
export interface RetainedMessage {
  openJobs: number;
  finishedAt?: string;
}

/**
 * Whether the message's accepted event must stay at this cutoff (`finishing`: it waits to be
 * composed or signed). An accepted event older than `holdFromMs` holds nothing: no message stays
 * unfinished that long on schedule and retries (limits.maxScheduleDays and delivery.maxAgeMs
 * before the cutoff), so one that has is stuck (jobs waiting for a sending source that never
 * comes, whose wait delivery.maxAgeMs does not count), and holding the floor for it would keep
 * every later event of every account, without end. Such a message is parked, as before this rule.
 */
export function holdsRetention(m: RetainedMessage, finishing: boolean, cutoffMs: number, accepted: { atMs: number; holdFromMs: number }): boolean {
  if (accepted.atMs < accepted.holdFromMs) return false;
  if (m.openJobs > 0 || finishing) return true;
  return m.finishedAt !== undefined && Date.parse(m.finishedAt) >= cutoffMs;
}
