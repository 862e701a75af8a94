import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import { api } from '../api';
import { navigate } from '../router';
import { ConfirmDialog } from './confirm-dialog';
import { ProblemBanner } from './problem-banner';
import { useAction } from './use-action';

/**
 * A detail page's delete: the danger button, a ConfirmDialog saying what goes (`children`),
 * DELETE `path`, then the list page `back`; a failure shows in the dialog.
 */
export function DeleteButton(props: { label: string; title: string; path: string; back: string; children: ComponentChildren }) {
  const [open, setOpen] = useState(false);
  const del = useAction();
  const confirm = async () => {
    if (await del.run(() => api.del(props.path).then(() => true))) navigate(props.back);
  };
  return (
    <>
      <button type="button" class="button button-danger" onClick={() => setOpen(true)}>
        {props.label}
      </button>
      {open && (
        <ConfirmDialog open title={props.title} confirmLabel={props.label} danger busy={del.busy} onConfirm={confirm} onCancel={() => setOpen(false)}>
          {props.children}
          <ProblemBanner error={del.error} />
        </ConfirmDialog>
      )}
    </>
  );
}
