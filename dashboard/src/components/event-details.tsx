/** An event's details (the SMTP reply of a delivery or bounce, the link of a click…) as short text. */
export function EventDetails(props: { details?: Record<string, unknown> }) {
  const entries = Object.entries(props.details ?? {}).filter(([, v]) => v !== null && v !== undefined && v !== '');
  if (entries.length === 0) return <span class="muted">—</span>;
  return (
    <dl class="event-details">
      {entries.map(([k, v]) => (
        <div key={k}>
          <dt>{k}</dt>
          <dd>{typeof v === 'object' ? JSON.stringify(v) : String(v)}</dd>
        </div>
      ))}
    </dl>
  );
}
