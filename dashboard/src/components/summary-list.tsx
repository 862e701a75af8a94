import type { ComponentChildren } from 'preact';

/** One row of a summary: its label and value; a row whose value is undefined is left out. */
export type SummaryRow = [string, ComponentChildren];

/** Labelled facts of one thing (a message, a received message) as a description list. */
export function SummaryList(props: { rows: SummaryRow[] }) {
  return (
    <dl class="summary">
      {props.rows
        .filter(([, v]) => v !== undefined)
        .map(([k, v]) => (
          <div key={k}>
            <dt>{k}</dt>
            <dd>{v}</dd>
          </div>
        ))}
    </dl>
  );
}
