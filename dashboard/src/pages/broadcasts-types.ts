/** The broadcast statuses the filter offers, and what the pages read from a status (the shapes are in ../wire). */
import type { BroadcastStatus } from '../wire';

export const BROADCAST_STATUSES = ['scheduled', 'accepted', 'processing', 'completed', 'canceled'] as const satisfies readonly BroadcastStatus[];

/** Still being expanded or delivered: the page refreshes itself. */
export function running(status: BroadcastStatus): boolean {
  return status === 'accepted' || status === 'processing';
}

/** What a cancel can still stop: a broadcast under way, or one waiting for its scheduled time. */
export function cancelable(status: BroadcastStatus): boolean {
  return running(status) || status === 'scheduled';
}

export function percentOf(completion: string): number {
  const n = Number.parseInt(completion, 10);
  return Number.isFinite(n) ? Math.min(100, Math.max(0, n)) : 0;
}
