import type { ComponentChildren } from 'preact';
import { useModal } from './use-modal';

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
  const { ref, titleId } = useModal(props.open);
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
