import { DataTable } from '../components/data-table';
import type { OpsSources } from '../wire';

interface PoolRow {
  pool: string;
  members: { source: string; weight: number }[];
  /** The mail types whose default pool this is (delivery.defaultPools). */
  defaultFor: string[];
}

/** Each pool of the answer with its members (in source order) and the mail types it is the default of. */
export function poolRows(o: OpsSources): PoolRow[] {
  const rows = new Map<string, PoolRow>();
  const row = (pool: string) => rows.get(pool) ?? rows.set(pool, { pool, members: [], defaultFor: [] }).get(pool)!;
  for (const s of o.results) for (const p of s.pools) row(p.pool).members.push({ source: s.name, weight: p.weight });
  for (const [type, pool] of Object.entries(o.defaultPools)) row(pool).defaultFor.push(type);
  return [...rows.values()];
}

/** "75%" of a member's weight in its pool: its share of the pool's turns while every member may send. */
function share(weight: number, members: { weight: number }[]): string {
  const total = members.reduce((n, m) => n + m.weight, 0);
  return total > 0 ? `${Math.round((weight / total) * 100)}%` : '—';
}

/** The pools: members with weights and shares, and which mail types go out through each unless their channel names a pool. */
export function PoolsSummary(props: { data: OpsSources | null; error: unknown }) {
  return (
    <section class="page-section" aria-labelledby="pools-title">
      <h2 id="pools-title">Pools</h2>
      <p class="muted">
        A message goes out through its channel's pool (<code>ipPool</code>, set on the channel) or else the default pool of its mail type; within a pool each source takes its weight's share of the turns.
      </p>
      <DataTable
        caption="Pools"
        rows={props.data ? poolRows(props.data) : null}
        error={props.error}
        rowKey={(r) => r.pool}
        columns={[
          { header: 'Pool', cell: (r) => <code class="pool-name">{r.pool}</code> },
          {
            header: 'Sources (weight, share)',
            cell: (r) => (
              <ul class="plain-list">
                {r.members.map((m) => (
                  <li key={m.source}>
                    {m.source} <span class="muted">(weight {m.weight}, {share(m.weight, r.members)})</span>
                  </li>
                ))}
              </ul>
            ),
          },
          { header: 'Default for', cell: (r) => (r.defaultFor.length > 0 ? r.defaultFor.map((t) => `${t} mail`).join(', ') : <span class="muted">channels that name it</span>) },
        ]}
        empty={{ title: 'No pools', next: 'Pools come from delivery.pools in the configuration.' }}
      />
    </section>
  );
}
