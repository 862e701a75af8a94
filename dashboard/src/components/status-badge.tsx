/** The tone of a status word: delivered/verified are good, bounced/failed bad, pending waits. */
const TONES: Record<string, 'good' | 'bad' | 'warn' | 'neutral'> = {
  delivered: 'good',
  verified: 'good',
  sent: 'good',
  completed: 'good',
  active: 'good',
  live: 'good',
  opened: 'good',
  clicked: 'good',
  bounced: 'bad',
  failed: 'bad',
  failing: 'bad',
  complained: 'bad',
  dropped: 'bad',
  canceled: 'bad',
  pending: 'warn',
  queued: 'warn',
  // A scheduled send waiting for its time (issue 34).
  scheduled: 'neutral',
  deferred: 'warn',
  retrying: 'warn',
  processing: 'warn',
  sandbox: 'neutral',
  // Inbound messages (issue 33) and the verdicts of their verification (RFC 8601 2.7).
  posted: 'good',
  received: 'warn',
  pass: 'good',
  fail: 'bad',
  permerror: 'bad',
  softfail: 'warn',
  temperror: 'warn',
};

/** A status as a small badge: colour and text both say it (colour alone is not enough). */
export function StatusBadge(props: { status: string }) {
  const tone = TONES[props.status] ?? 'neutral';
  return <span class={`badge badge-${tone}`}>{props.status}</span>;
}
