import { useEffect, useState } from 'preact/hooks';
import { api } from '../api';
import { Field } from '../components/field';
import { ProblemBanner } from '../components/problem-banner';
import type { TemplateRenderJson } from '../wire';
import { HtmlPreview } from './message-body';

/** Typing pauses this long before the API renders again. */
export const PREVIEW_DEBOUNCE_MS = 400;
/** GET /dashboard/templates/{id}/html takes at most this much JSON in its query (dashboard-template-html.ts MAX_DATA). */
const MAX_FRAME_DATA = 8_000;

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

export interface Preview {
  /** The last render that answered (kept while the next one runs). */
  result: TemplateRenderJson | null;
  /** The data (compact JSON) of `result`. */
  json: string;
  /** The last render's failure (templating_error names the part, with its line and column). */
  error: unknown;
  pending: boolean;
}

/**
 * POST /templates/{id}/render {data, version} once the sample data has not changed for
 * PREVIEW_DEBOUNCE_MS (compared as compact JSON: spaces typed render nothing); an answer
 * overtaken by a newer request is dropped.
 */
export function useTemplatePreview(id: string, version: number, sampleJson: string | null): Preview {
  const [state, setState] = useState<Preview>({ result: null, json: '', error: null, pending: sampleJson !== null });
  useEffect(() => {
    if (sampleJson === null) return;
    let current = true;
    setState((s) => ({ ...s, pending: true }));
    const timer = window.setTimeout(() => {
      const data = JSON.parse(sampleJson) as Record<string, unknown>;
      api.post<TemplateRenderJson>(`/templates/${encodeURIComponent(id)}/render`, { data, version }).then(
        (result) => current && setState({ result, json: sampleJson, error: null, pending: false }),
        (error: unknown) => current && setState((s) => ({ ...s, error, pending: false })),
      );
    }, PREVIEW_DEBOUNCE_MS);
    return () => {
      current = false;
      window.clearTimeout(timer);
    };
  }, [id, version, sampleJson]);
  return state;
}

/** The sample data of a template, kept in this tab (sessionStorage) so that a reload or the next version keeps it. */
export function useSampleText(templateId: string): [string, (text: string) => void] {
  const key = `postrider.template-sample.${templateId}`;
  const [text, setText] = useState(() => readStored(key) ?? '{\n  \n}');
  const set = (next: string) => {
    setText(next);
    try {
      window.sessionStorage.setItem(key, next);
    } catch {
      // Storage off (private mode, quota): the data lives as long as the page.
    }
  };
  return [text, set];
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

/** What the API rendered: the subject, the HTML in its sandboxed frame, the text. */
export function PreviewOutput(props: { templateId: string; preview: Preview }) {
  const { result, json, error, pending } = props.preview;
  const frameSrc = (images: boolean) =>
    `/dashboard/templates/${encodeURIComponent(props.templateId)}/html?version=${result?.version ?? 1}&data=${encodeURIComponent(json)}${images ? '&images=1' : ''}`;
  return (
    <div class="template-preview" aria-busy={pending}>
      <p class="muted" role="status">
        {pending ? 'Rendering…' : error ? 'The last render failed: the error is beside the field it names.' : result ? `Version ${result.version}, rendered by the API with the sample data.` : ''}
      </p>
      <ProblemBanner error={error} />
      {result && (
        <>
          <dl class="facts">
            <dt>Subject</dt>
            <dd>{result.subject}</dd>
          </dl>
          {result.html !== null &&
            (json.length > MAX_FRAME_DATA ? (
              <p class="banner banner-warn">The HTML preview takes sample data up to {MAX_FRAME_DATA.toLocaleString()} characters of JSON; the subject and text use all of it.</p>
            ) : (
              <HtmlPreview src={frameSrc} title={`HTML of version ${result.version} with the sample data`} />
            ))}
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
