/** Big numbers with labels (totals), as a description list. */
export function StatTiles(props: { items: { label: string; value: number; hint?: string }[] }) {
  return (
    <dl class="tiles">
      {props.items.map((i) => (
        <div class="tile" key={i.label}>
          <dt>{i.label}</dt>
          <dd>
            {i.value.toLocaleString()}
            {i.hint && <small class="muted"> {i.hint}</small>}
          </dd>
        </div>
      ))}
    </dl>
  );
}
