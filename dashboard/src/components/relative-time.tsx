const UNITS: [Intl.RelativeTimeFormatUnit, number][] = [
  ['year', 31_536_000_000],
  ['month', 2_592_000_000],
  ['day', 86_400_000],
  ['hour', 3_600_000],
  ['minute', 60_000],
  ['second', 1_000],
];

const format = new Intl.RelativeTimeFormat(undefined, { numeric: 'auto' });

/** "3 minutes ago" for an ISO time (or ms), relative to `now`. */
export function relativeTime(at: string | number, now = Date.now()): string {
  const ms = (typeof at === 'number' ? at : Date.parse(at)) - now;
  for (const [unit, size] of UNITS) if (Math.abs(ms) >= size || unit === 'second') return format.format(Math.round(ms / size), unit);
  return '';
}

/** A <time> with the relative form as text and the exact instant as its title and datetime. */
export function RelativeTime(props: { at: string | null | undefined }) {
  if (!props.at) return <span class="muted">—</span>;
  const exact = new Date(props.at);
  return (
    <time dateTime={exact.toISOString()} title={exact.toLocaleString()}>
      {relativeTime(props.at)}
    </time>
  );
}
