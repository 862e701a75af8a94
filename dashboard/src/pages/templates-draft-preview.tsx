import type { ComponentChild } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import type { TemplateJson } from '../wire';
import { RemoteImages } from './message-body';
import { contentChanged, type TemplateDraft } from './templates-form';
import { PreviewOutput, SampleDataField, savedHtml, useRender, useTemplatePreview, type Preview, type Rendered } from './templates-preview';

/** The frame route of unsaved content (src/http/routes/dashboard-template-draft-html.ts). */
const DRAFT_HTML_PATH = '/dashboard/templates/preview-html';
/** The route takes this much sample data beside the draft (MAX_DRAFT_DATA there). */
const MAX_FRAME_DATA = 64 * 1024;
/** One editor per page, so one frame: the form below targets it by this name. */
const FRAME_NAME = 'template-draft-html';

/** The editor's content as POST /templates/render takes it, or null while it cannot render (no subject, or neither html nor text). */
export function draftContent(d: TemplateDraft): { subject: string; html?: string; text?: string; inlineStyles: boolean } | null {
  if (d.subject === '' || (d.html === '' && d.text === '')) return null;
  const content: { subject: string; html?: string; text?: string; inlineStyles: boolean } = { subject: d.subject, inlineStyles: d.inlineStyles };
  if (d.html !== '') content.html = d.html;
  if (d.text !== '') content.text = d.text;
  return content;
}

/** Unsaved content rendered with the sample data (POST /templates/render), debounced as a saved version's preview; null: nothing to render. */
export function useDraftPreview(draft: TemplateDraft | null, sampleJson: string | null): Preview {
  const content = draft && draftContent(draft);
  const body = content && sampleJson !== null ? { ...content, data: JSON.parse(sampleJson) as Record<string, unknown> } : null;
  return useRender('/templates/render', body);
}

/**
 * The HTML of unsaved content in a sandboxed frame with the mail's own styles. srcdoc and blob:
 * URLs take the dashboard's policy (style-src 'self' blocks every inline style), and a GET cannot
 * carry a draft of up to templates.maxBytes, so a hidden form posts the render's request body
 * (one field, `draft`: JSON) into the named frame, to a route that answers it under the frame
 * policy of a saved version's preview (session cookie alone, same-origin only, sandboxed without
 * scripts, framed by the dashboard only). Each body gets a new frame: the first navigation of a
 * new frame replaces its blank page, where posting into the same frame would add an entry to the
 * tab's history per keystroke (Back would step through the previews).
 */
export function DraftHtmlPreview(props: { preview: Preview; title: string }) {
  const [images, setImages] = useState(false);
  const form = useRef<HTMLFormElement>(null);
  const body = props.preview.body;
  useEffect(() => form.current?.submit(), [body, images]);
  if (props.preview.json.length > MAX_FRAME_DATA) {
    return <p class="banner banner-warn">The HTML preview takes sample data up to {MAX_FRAME_DATA.toLocaleString()} characters of JSON; the subject and text use all of it.</p>;
  }
  return (
    <div class="html-preview">
      <RemoteImages loaded={images} onLoad={() => setImages(true)} />
      <form ref={form} hidden method="post" action={`${DRAFT_HTML_PATH}${images ? '?images=1' : ''}`} target={FRAME_NAME}>
        <input type="hidden" name="draft" value={body} />
      </form>
      <iframe key={`${body}:${images}`} name={FRAME_NAME} class="mail-frame" title={props.title} sandbox="" referrerPolicy="no-referrer" />
    </div>
  );
}

/** The editor's preview: which render it shows, and how to show its HTML. */
export interface EditorPreview {
  preview: Preview;
  /** The preview is of content that is not saved (the editor differs from the version shown, or nothing is saved yet). */
  unsaved: boolean;
  /** Unsaved content that cannot render yet (no subject, or neither html nor text). */
  incomplete: boolean;
  describe: (r: Rendered) => string;
  html: (r: Rendered) => ComponentChild;
}

/**
 * The preview of a template editor: while its content differs from the saved version shown
 * (`saved`; always on the New template form, which has none), the unsaved content through POST
 * /templates/render, else the saved version through POST /templates/{id}/render. Either render
 * runs only while it is the one shown.
 */
export function useEditorPreview(draft: TemplateDraft, sampleJson: string | null, saved?: TemplateJson): EditorPreview {
  const unsaved = saved === undefined || contentChanged(draft, saved.version);
  const stored = useTemplatePreview(saved?.id ?? '', saved?.version.version ?? 1, unsaved ? null : sampleJson);
  const edits = useDraftPreview(unsaved ? draft : null, sampleJson);
  if (!unsaved && saved) {
    return { preview: stored, unsaved, incomplete: false, describe: (r) => `Version ${'version' in r ? r.version : ''}, rendered by the API with the sample data.`, html: savedHtml(saved.id, stored) };
  }
  return {
    preview: edits,
    unsaved,
    incomplete: draftContent(draft) === null,
    describe: () => 'Your unsaved edits, rendered by the API with the sample data.',
    html: () => <DraftHtmlPreview preview={edits} title="HTML of your unsaved edits with the sample data" />,
  };
}

/** The preview's card: the sample data, what the preview is of, and what the API rendered. */
export function PreviewPanel(props: { sampleText: string; onSample: (text: string) => void; sampleError?: string; editor: EditorPreview; savedNote: string }) {
  const e = props.editor;
  return (
    <section class="card page-section" aria-labelledby="tpl-preview">
      <h2 id="tpl-preview">Preview</h2>
      <SampleDataField value={props.sampleText} error={props.sampleError} onInput={props.onSample} />
      {e.unsaved && (
        <p class="banner banner-warn" role="note">
          Preview of your unsaved edits. {props.savedNote}
        </p>
      )}
      {e.incomplete ? <p class="muted">Type a subject, and HTML or text, to see them rendered.</p> : <PreviewOutput preview={e.preview} describe={e.describe} html={e.html} />}
    </section>
  );
}
