import type { ComponentChildren } from 'preact';
import { useEffect, useId, useRef } from 'preact/hooks';

/**
 * A modal confirmation on the native <dialog> (focus is trapped and Escape cancels by the
 * browser itself). Shown while `open`; the confirm button is the destructive style when `danger`.
 */
export function ConfirmDialog(props: {
  open: boolean;
  title: string;
  children?: ComponentChildren;
  confirmLabel: string;
  danger?: boolean;
  busy?: boolean;
  onConfirm: () => void;
  onCancel: () => void;
}) {
  const ref = useRef<HTMLDialogElement>(null);
  // One id per dialog: a page with two dialogs (rotate and delete) must not give both one name.
  const titleId = useId();
  useEffect(() => {
    const d = ref.current;
    if (!d) return;
    if (props.open && !d.open) d.showModal();
    if (!props.open && d.open) d.close();
  }, [props.open]);
  return (
    <dialog ref={ref} class="dialog" aria-labelledby={titleId} onCancel={(e) => (e.preventDefault(), props.onCancel())}>
      <h2 id={titleId}>{props.title}</h2>
      <div>{props.children}</div>
      <div class="actions">
        <button type="button" class="button" onClick={props.onCancel}>
          Cancel
        </button>
        <button type="button" class={props.danger ? 'button button-danger' : 'button button-primary'} disabled={props.busy} onClick={props.onConfirm}>
          {props.confirmLabel}
        </button>
      </div>
    </dialog>
  );
}
