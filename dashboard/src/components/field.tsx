import type { ComponentChildren } from 'preact';
import { useId } from 'preact/hooks';
import { ApiError } from '../api';

/**
 * A labelled form field with its hint and its error from the problem body: pass the request's
 * ApiError and the field's JSON pointer ("/name"), and the field's messages show beside it,
 * tied to the input with aria-describedby and aria-invalid.
 */
export function Field(props: {
  label: string;
  pointer?: string;
  error?: unknown;
  hint?: ComponentChildren;
  children: (a11y: { id: string; 'aria-describedby'?: string; 'aria-invalid'?: boolean }) => ComponentChildren;
}) {
  const id = useId();
  const message = props.pointer && props.error instanceof ApiError ? props.error.fieldMessage(props.pointer) : undefined;
  const described = [props.hint ? `${id}-hint` : '', message ? `${id}-error` : ''].filter(Boolean).join(' ') || undefined;
  return (
    <div class={message ? 'field field-invalid' : 'field'}>
      <label for={id}>{props.label}</label>
      {props.children({ id, 'aria-describedby': described, 'aria-invalid': message ? true : undefined })}
      {props.hint && (
        <small class="muted" id={`${id}-hint`}>
          {props.hint}
        </small>
      )}
      {message && (
        <small class="field-error" id={`${id}-error`}>
          {message}
        </small>
      )}
    </div>
  );
}
