import { useEffect, useId, useRef } from 'preact/hooks';

/**
 * A native <dialog> shown as a modal while `open` (showModal: the browser traps focus and Escape
 * cancels) and closed when not; with one title id per dialog, so that a page with two dialogs
 * (rotate and delete) does not give both one name.
 */
export function useModal(open: boolean) {
  const ref = useRef<HTMLDialogElement>(null);
  const titleId = useId();
  useEffect(() => {
    const d = ref.current;
    if (!d) return;
    if (open && !d.open) d.showModal();
    if (!open && d.open) d.close();
  }, [open]);
  return { ref, titleId };
}
