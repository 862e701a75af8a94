import type { ComponentChild } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { api, whenSignedInAgain } from '../api';
import { Field } from '../components/field';
import { ProblemBanner } from '../components/problem-banner';
import type { TemplateDraftRenderJson, TemplateRenderJson } from '../wire';
import { HtmlPreview } from './message-body';

/** Typing pauses this long before the API renders again. */
export const PREVIEW_DEBOUNCE_MS = 400;
/** GET /dashboard/templates/{id}/html takes at most this much JSON in its query (dashboard-template-html.ts MAX_DATA). */
const MAX_FRAME_DATA = 8_000;
/**
 * ...in an address of at most this many characters (domain/request-target.ts MAX_URL_LENGTH; longer
 * is a 414): percent-encoded, a quote takes 3 and a character outside ASCII up to 9.
 */
const MAX_FRAME_URL = 16 * 1024;

/** The sample data as typed: a JSON object, compact (what is sent), or why it is not one. */
export function parseSample(text: string): { json: string; data: Record<string, unknown> } | { error: string } {
  let value: unknown;
  try {
    value = JSON.parse(text.trim() === '' ? '{}' : text);
  } catch (e) {
    return { error: `Not JSON: ${e instanceof Error ? e.message : String(e)}` };
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return { error: 'The sample data must be a JSON object, such as {"name": "Ann"}.' };
  return { json: JSON.stringify(value), data: value as Record<string, unknown> };
}

/** What a render answers: a stored version's (POST /templates/{id}/render) or unsaved content's (POST /templates/render, without version). */
export type Rendered = TemplateRenderJson | TemplateDraftRenderJson;

export interface Preview {
  /** The last render that answered (kept while the next one runs). */
  result: Rendered | null;
  /** The data (compact JSON) of `result`. */
  json: string;
  /** The whole request body (JSON) that rendered `result`: what the frame of unsaved edits posts. */
  body: string;
  /** The last render's failure (templating_error names the part, with its line and column). */
  error: unknown;
  pending: boolean;
}

/**
 * POST `path` with `body` once the body has not changed for PREVIEW_DEBOUNCE_MS (compared as
 * JSON: spaces typed in the sample data render nothing); an answer overtaken by a newer request
 * is dropped. A null body renders nothing (the last answer stays).
 */
export function useRender(path: string, body: { data: Record<string, unknown> } | null): Preview {
  const key = body === null ? null : JSON.stringify(body);
  const [state, setState] = useState<Preview>({ result: null, json: '', body: '', error: null, pending: key !== null });
  // A render the ended session refused runs again once the user has signed in again.
  const [tries, setTries] = useState(0);
  useEffect(() => whenSignedInAgain(state.error, () => setTries((n) => n + 1)), [state.error]);
  useEffect(() => {
    if (key === null) return;
    let current = true;
    setState((s) => ({ ...s, pending: true }));
    const timer = window.setTimeout(() => {
      const sent = JSON.parse(key) as { data: Record<string, unknown> };
      api.post<Rendered>(path, sent).then(
        (result) => current && setState({ result, json: JSON.stringify(sent.data), body: key, error: null, pending: false }),
        (error: unknown) => current && setState((s) => ({ ...s, error, pending: false })),
      );
    }, PREVIEW_DEBOUNCE_MS);
    return () => {
      current = false;
      window.clearTimeout(timer);
    };
  }, [path, key, tries]);
  return state;
}

/** A stored version rendered with the sample data (POST /templates/{id}/render {data, version}); null data: none yet. */
export function useTemplatePreview(id: string, version: number, sampleJson: string | null): Preview {
  const body = sampleJson === null ? null : { data: JSON.parse(sampleJson) as Record<string, unknown>, version };
  return useRender(`/templates/${encodeURIComponent(id)}/render`, body);
}

/** The New template form's sample data, under this name until the template has an id. */
export const NEW_SAMPLE = 'new';

const sampleKey = (templateId: string) => `postrider.template-sample.${templateId}`;

/** The sample data of a template, kept in this tab (sessionStorage) so that a reload or the next version keeps it. */
export function useSampleText(templateId: string): [string, (text: string) => void] {
  const key = sampleKey(templateId);
  const [text, setText] = useState(() => readStored(key) ?? '{\n  \n}');
  const set = (next: string) => {
    setText(next);
    store(key, next);
  };
  return [text, set];
}

/** The sample data typed on the New template form, for the page of the template it made. */
export function keepSample(templateId: string, text: string): void {
  store(sampleKey(templateId), text);
}

function store(key: string, text: string): void {
  try {
    window.sessionStorage.setItem(key, text);
  } catch {
    // Storage off (private mode, quota): the data lives as long as the page.
  }
}

function readStored(key: string): string | null {
  try {
    return window.sessionStorage.getItem(key);
  } catch {
    return null;
  }
}

export function SampleDataField(props: { value: string; error?: string; onInput: (text: string) => void }) {
  return (
    <Field label="Sample data (JSON)" hint={'The data a send would carry, e.g. {"name": "Ann", "items": [{"title": "Socks"}]}.'}>
      {(a) => (
        <>
          <textarea
            {...a}
            class="code-input"
            rows={6}
            spellcheck={false}
            aria-invalid={props.error ? true : undefined}
            aria-errormessage={props.error ? `${a.id}-sample-error` : undefined}
            value={props.value}
            onInput={(e) => props.onInput(e.currentTarget.value)}
          />
          {props.error && (
            <small class="field-error" id={`${a.id}-sample-error`}>
              {props.error}
            </small>
          )}
        </>
      )}
    </Field>
  );
}

/** A stored version's HTML in its sandboxed frame (GET /dashboard/templates/{id}/html: the data travels in the address). */
export function savedHtml(templateId: string, preview: Preview) {
  return (result: Rendered): ComponentChild => {
    const version = 'version' in result ? result.version : 1;
    const src = (images: boolean) =>
      `/dashboard/templates/${encodeURIComponent(templateId)}/html?version=${version}&data=${encodeURIComponent(preview.json)}${images ? '&images=1' : ''}`;
    if (preview.json.length > MAX_FRAME_DATA || src(true).length > MAX_FRAME_URL) {
      return (
        <p class="banner banner-warn">
          The HTML preview takes sample data up to {MAX_FRAME_DATA.toLocaleString()} characters of JSON, fewer outside ASCII (it travels in the frame's address, at most{' '}
          {MAX_FRAME_URL.toLocaleString()} characters once encoded); the subject and text use all of it.
        </p>
      );
    }
    return <HtmlPreview src={src} title={`HTML of version ${version} with the sample data`} />;
  };
}

/** What the API rendered: the subject, the HTML in its sandboxed frame (`html`), the text. `describe` says what was rendered. */
export function PreviewOutput(props: { preview: Preview; describe: (r: Rendered) => string; html: (r: Rendered) => ComponentChild }) {
  const { result, error, pending } = props.preview;
  return (
    <div class="template-preview" aria-busy={pending}>
      <p class="muted" role="status">
        {pending ? 'Rendering…' : error ? 'The last render failed: the error is beside the field it names.' : result ? props.describe(result) : ''}
      </p>
      <ProblemBanner error={error} />
      {result && (
        <>
          <dl class="facts">
            <dt>Subject</dt>
            <dd>{result.subject}</dd>
          </dl>
          {result.html !== null && props.html(result)}
          {result.text !== null && (
            <>
              <h3 id="preview-text">Text</h3>
              <pre class="mail-text" tabIndex={0} aria-labelledby="preview-text">
                {result.text}
              </pre>
            </>
          )}
        </>
      )}
    </div>
  );
}
