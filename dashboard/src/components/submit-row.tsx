/** The submit button of an edit form: its label, or "Saving…" and disabled while the save runs. */
export function SubmitRow(props: { label: string; busy: boolean }) {
  return (
    <div class="actions">
      <button type="submit" class="button button-primary" disabled={props.busy}>
        {props.busy ? 'Saving…' : props.label}
      </button>
    </div>
  );
}
