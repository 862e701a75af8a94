import { useRef } from 'preact/hooks';
import { ApiError, placeOf } from '../api';
import { Choice, ChoiceGroup } from '../components/choice-group';
import { Field } from '../components/field';
import { SubmitRow } from '../components/submit-row';
import type { TemplateJson, TemplateVersionJson } from '../wire';
import { ChannelPicker } from './domains-form';

/** The editor's fields as typed: an empty html or text is "no such part". */
export interface TemplateDraft {
  name: string;
  alias: string;
  channelIds: string[];
  subject: string;
  html: string;
  text: string;
  inlineStyles: boolean;
}

export const NEW_TEMPLATE: TemplateDraft = { name: '', alias: '', channelIds: [], subject: '', html: '', text: '', inlineStyles: false };

/** The draft of a stored template as one of its versions has it. */
export function draftOf(t: TemplateJson): TemplateDraft {
  const v = t.version;
  return { name: t.name, alias: t.alias ?? '', channelIds: t.channelIds, subject: v.subject, html: v.html ?? '', text: v.text ?? '', inlineStyles: v.inlineStyles };
}

/** The draft's content differs from the version it was loaded from (saving it makes a new version). */
export function contentChanged(d: TemplateDraft, v: TemplateVersionJson): boolean {
  return d.subject !== v.subject || d.html !== (v.html ?? '') || d.text !== (v.text ?? '') || d.inlineStyles !== v.inlineStyles;
}

/** POST /templates: version 1, active. */
export function createBody(d: TemplateDraft): Record<string, unknown> {
  const body: Record<string, unknown> = { name: d.name, subject: d.subject, channelIds: d.channelIds, inlineStyles: d.inlineStyles };
  if (d.alias !== '') body.alias = d.alias;
  if (d.html !== '') body.html = d.html;
  if (d.text !== '') body.text = d.text;
  return body;
}

/**
 * PATCH /templates/{id}: the name, alias and channels, and, when the content differs from the
 * version shown, every content field (a part left empty is null: removed), so the new version is
 * what the editor shows whichever version was active.
 */
export function patchBody(d: TemplateDraft, shown: TemplateVersionJson): Record<string, unknown> {
  const body: Record<string, unknown> = { name: d.name, alias: d.alias === '' ? null : d.alias, channelIds: d.channelIds };
  if (contentChanged(d, shown)) Object.assign(body, { subject: d.subject, html: d.html || null, text: d.text || null, inlineStyles: d.inlineStyles });
  return body;
}

/**
 * The template's fields, controlled by the page (which compares them with the version shown).
 * `error` is the failed save's; `renderError` the preview's, whose templating_error names a part
 * too: both show beside the part they name, with its line and column.
 */
export function TemplateForm(props: {
  value: TemplateDraft;
  onChange: (d: TemplateDraft) => void;
  submitLabel: string;
  busy: boolean;
  error: unknown;
  renderError?: unknown;
  onSubmit: () => void;
}) {
  const v = props.value;
  const set = (patch: Partial<TemplateDraft>) => props.onChange({ ...v, ...patch });
  // A part's error: the save's when it names the part, else the preview's.
  const partError = (pointer: string) => (props.error instanceof ApiError && props.error.fieldMessage(pointer) ? props.error : props.renderError);
  return (
    <form
      class="settings-form template-form"
      onSubmit={(e) => {
        e.preventDefault();
        props.onSubmit();
      }}
    >
      <Field label="Name" pointer="/name" error={props.error} hint="For you: the list shows it.">
        {(a) => <input {...a} type="text" required maxLength={100} autoComplete="off" value={v.name} onInput={(e) => set({ name: e.currentTarget.value })} />}
      </Field>
      <Field label="Alias (optional)" pointer="/alias" error={props.error} hint="What sends may name instead of the id: a-z, 0-9, dot, underscore and hyphen.">
        {(a) => <input {...a} type="text" maxLength={100} autoComplete="off" spellcheck={false} value={v.alias} onInput={(e) => set({ alias: e.currentTarget.value })} />}
      </Field>
      <ChannelPicker
        legend="Channels whose keys may use it"
        hint="None: account-level keys only."
        value={v.channelIds}
        error={props.error}
        onChange={(channelIds) => set({ channelIds })}
      />
      <Field label="Subject" pointer="/subject" error={partError('/subject')} hint="Handlebars: {{name}} is replaced by the data's name.">
        {(a) => <input {...a} type="text" required maxLength={998} autoComplete="off" value={v.subject} onInput={(e) => set({ subject: e.currentTarget.value })} />}
      </Field>
      <PartField label="HTML" pointer="/html" error={partError('/html')} value={v.html} onInput={(html) => set({ html })} hint="{{var}} is HTML-escaped, {{{var}}} is not. HTML or text, or both." />
      <PartField label="Text" pointer="/text" error={partError('/text')} value={v.text} onInput={(text) => set({ text })} />
      <ChoiceGroup legend="Styles" pointers={['/inlineStyles']} error={props.error}>
        <Choice type="checkbox" name="inlineStyles" checked={v.inlineStyles} onChange={(inlineStyles) => set({ inlineStyles })}>
          Inline the &lt;style&gt; rules into style attributes (many mail programs ignore &lt;style&gt;)
        </Choice>
      </ChoiceGroup>
      <SubmitRow label={props.submitLabel} busy={props.busy} />
    </form>
  );
}

/** A part's textarea; a templating error with a place gets a button that puts the cursor there. */
function PartField(props: { label: string; pointer: string; error: unknown; value: string; onInput: (v: string) => void; hint?: string }) {
  const ref = useRef<HTMLTextAreaElement>(null);
  const first = props.error instanceof ApiError ? props.error.problem.errors?.[props.pointer]?.[0] : undefined;
  const place = first ? placeOf(first) : undefined;
  const goTo = () => {
    const el = ref.current;
    if (!el || !first?.line) return;
    const at = offsetOf(el.value, first.line, first.column ?? 1);
    el.focus();
    el.setSelectionRange(at, at);
  };
  return (
    <Field label={props.label} pointer={props.pointer} error={props.error} hint={props.hint}>
      {(a) => (
        <>
          <textarea {...a} ref={ref} class="code-input" rows={8} spellcheck={false} value={props.value} onInput={(e) => props.onInput(e.currentTarget.value)} />
          {place && (
            <button type="button" class="button button-small go-to" onClick={goTo}>
              Go to {place} of {props.label}
            </button>
          )}
        </>
      )}
    </Field>
  );
}

/** The character offset of a 1-based line and column in a text (clamped to the text). */
function offsetOf(text: string, line: number, column: number): number {
  const lines = text.split('\n');
  let at = 0;
  for (let i = 0; i < Math.min(line - 1, lines.length - 1); i++) at += lines[i].length + 1;
  return Math.min(at + Math.max(0, column - 1), text.length);
}
