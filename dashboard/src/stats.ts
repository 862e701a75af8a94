/** The counters the overview shows (the statistics answers are StatTotals and StatSeries of ./wire) and sums over mail types. */
import type { StatCounters, StatTotals } from './wire';

export const COUNTERS = ['sent', 'delivered', 'bounced', 'opened', 'clicked', 'complained'] as const satisfies readonly (keyof StatCounters)[];
export type Counter = (typeof COUNTERS)[number];

export type MailTypeChoice = 'all' | 'transactional' | 'broadcast';

export function pick(t: StatTotals, mailType: MailTypeChoice, c: Counter): number {
  if (mailType === 'all') return t.transactional[c] + t.broadcast[c];
  return t[mailType][c];
}

/** YYYY-MM-DD of a UTC day, `daysAgo` days before today. */
export function utcDate(daysAgo = 0, now = Date.now()): string {
  return new Date(now - daysAgo * 86_400_000).toISOString().slice(0, 10);
}

export const COLORS: Record<Counter, string> = {
  sent: '#2563eb',
  delivered: '#15803d',
  bounced: '#b91c1c',
  opened: '#7c3aed',
  clicked: '#0e7490',
  complained: '#c2410c',
};
