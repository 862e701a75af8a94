import type { ComponentChildren } from 'preact';
import { useId } from 'preact/hooks';
import { ApiError } from '../api';

/**
 * A fieldset of radios or checkboxes with its legend, hint and the problem body's messages for
 * `pointers` (JSON pointers such as "/events" or "/tracking/links") shown beside it.
 */
export function ChoiceGroup(props: { legend: string; pointers: string[]; error?: unknown; hint?: ComponentChildren; children: ComponentChildren }) {
  const id = useId();
  const e = props.error instanceof ApiError ? props.error : null;
  const messages = e ? props.pointers.map((p) => e.fieldMessage(p)).filter((m): m is string => !!m) : [];
  const described = [props.hint ? `${id}-hint` : '', messages.length ? `${id}-error` : ''].filter(Boolean).join(' ') || undefined;
  return (
    <fieldset class={messages.length ? 'choices field-invalid' : 'choices'} aria-describedby={described}>
      <legend>{props.legend}</legend>
      <div class="choice-list">{props.children}</div>
      {props.hint && (
        <small class="muted" id={`${id}-hint`}>
          {props.hint}
        </small>
      )}
      {messages.length > 0 && (
        <small class="field-error" id={`${id}-error`}>
          {messages.join('; ')}
        </small>
      )}
    </fieldset>
  );
}

/** One checkbox or radio with its label (the whole label is the click target). */
export function Choice(props: { type: 'checkbox' | 'radio'; name: string; checked: boolean; onChange: (checked: boolean) => void; children: ComponentChildren; value?: string }) {
  return (
    <label class="choice">
      <input type={props.type} name={props.name} value={props.value} checked={props.checked} onChange={(ev) => props.onChange(ev.currentTarget.checked)} />
      <span>{props.children}</span>
    </label>
  );
}
