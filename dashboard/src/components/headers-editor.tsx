import { Field } from './field';
import type { WebhookHeader } from '../wire';

/**
 * Extra request headers sent with every POST of a webhook or an inbound route (a token of the
 * receiving service, say), each field with its problem messages (/additionalHeaders/<i>/…).
 */
export function HeadersEditor(props: { value: WebhookHeader[]; error: unknown; onChange: (h: WebhookHeader[]) => void }) {
  const edit = (i: number, patch: Partial<WebhookHeader>) => props.onChange(props.value.map((h, j) => (j === i ? { ...h, ...patch } : h)));
  return (
    <fieldset class="choices">
      <legend>Additional headers</legend>
      {props.value.length === 0 && <p class="muted">None. Add one when the receiver wants a token in a header.</p>}
      {props.value.map((h, i) => (
        <div class="header-row" key={i}>
          <Field label={`Header ${i + 1} name`} pointer={`/additionalHeaders/${i}/name`} error={props.error}>
            {(a) => <input {...a} type="text" required autoComplete="off" value={h.name} onInput={(e) => edit(i, { name: e.currentTarget.value })} />}
          </Field>
          <Field label={`Header ${i + 1} value`} pointer={`/additionalHeaders/${i}/value`} error={props.error}>
            {(a) => <input {...a} type="text" autoComplete="off" value={h.value} onInput={(e) => edit(i, { value: e.currentTarget.value })} />}
          </Field>
          <button type="button" class="button button-small" onClick={() => props.onChange(props.value.filter((_, j) => j !== i))}>
            Remove header {i + 1}
          </button>
        </div>
      ))}
      <div>
        <button type="button" class="button button-small" onClick={() => props.onChange([...props.value, { name: '', value: '' }])}>
          Add header
        </button>
      </div>
    </fieldset>
  );
}
