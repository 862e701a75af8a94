import type { ComponentChildren } from 'preact';

export interface Column<T> {
  header: string;
  cell: (row: T) => ComponentChildren;
  /** Right-aligned numbers. */
  numeric?: boolean;
  /** A class on the column's header and cells (widths, wrapping). */
  class?: string;
}

/**
 * A table of rows, or, when there are none, an empty state that says what to do next. It
 * scrolls sideways inside its own box on narrow screens, so the page never does.
 *
 * `rows` null (or undefined) is still loading, unless `error` says the load failed: then the
 * empty state, whose next step is also the way on (clear the filters, create one...), while the
 * page's ProblemBanner says what failed. Rows kept from before a failed load still show.
 */
export function DataTable<T>(props: {
  caption: string;
  columns: Column<T>[];
  rows: T[] | null | undefined;
  rowKey: (row: T) => string;
  empty: { title: string; next: ComponentChildren };
  loading?: boolean;
  error?: unknown;
}) {
  const rows = props.rows ?? (props.error ? [] : null);
  if (rows === null || props.loading) return <p class="muted" aria-busy="true">Loading…</p>;
  if (rows.length === 0) {
    return (
      <div class="empty-state">
        <h2>{props.empty.title}</h2>
        <div>{props.empty.next}</div>
      </div>
    );
  }
  return (
    <div class="table-wrap" tabIndex={0} role="region" aria-label={props.caption}>
      <table>
        <caption class="visually-hidden">{props.caption}</caption>
        <thead>
          <tr>
            {props.columns.map((c) => (
              <th scope="col" class={cellClass(c)} key={c.header}>
                {c.header}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {rows.map((row) => (
            <tr key={props.rowKey(row)}>
              {props.columns.map((c) => (
                <td class={cellClass(c)} key={c.header}>
                  {c.cell(row)}
                </td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

function cellClass(c: Pick<Column<never>, 'numeric' | 'class'>): string | undefined {
  return [c.numeric ? 'num' : '', c.class ?? ''].filter(Boolean).join(' ') || undefined;
}
