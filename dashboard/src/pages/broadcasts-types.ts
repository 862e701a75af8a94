/** The broadcast statuses the filter offers, and what the pages read from a status (the shapes are in ../wire). */
import type { BroadcastStatus } from '../wire';

export const BROADCAST_STATUSES = ['accepted', 'processing', 'completed', 'canceled'] as const satisfies readonly BroadcastStatus[];

/** Still being expanded or delivered: the page refreshes itself. */
export function running(status: BroadcastStatus): boolean {
  return status === 'accepted' || status === 'processing';
}

export function percentOf(completion: string): number {
  const n = Number.parseInt(completion, 10);
  return Number.isFinite(n) ? Math.min(100, Math.max(0, n)) : 0;
}
