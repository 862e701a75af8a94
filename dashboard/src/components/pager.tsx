/**
 * Previous/Next over a limit/offset list (the API's paging, spec 4.2) with "26–50 of 73" as
 * text, announced when it changes. Nothing when everything fits on one page.
 */
export function Pager(props: { label: string; offset: number; limit: number; total: number; onChange: (offset: number) => void }) {
  const { offset, limit, total } = props;
  if (offset === 0 && total <= limit) return null;
  const last = Math.min(offset + limit, total);
  return (
    <nav class="pager" aria-label={`${props.label}: pages`}>
      <button type="button" class="button" disabled={offset === 0} onClick={() => props.onChange(Math.max(0, offset - limit))}>
        Previous
      </button>
      <span aria-live="polite">
        {total === 0 ? 0 : Math.min(offset + 1, total)}–{last} of {total}
      </span>
      <button type="button" class="button" disabled={last >= total} onClick={() => props.onChange(offset + limit)}>
        Next
      </button>
    </nav>
  );
}
