/**
 * Renders the subject, html and text parts of a message template with Handlebars.
 *
 * `{{var}}` is HTML-escaped and `{{{var}}}` is inserted raw, in the html part only: the
 * subject and the text part are not HTML, so escaping there would put `&amp;` into what the
 * recipient reads. Each call uses its own Handlebars environment (`Handlebars.create()`), so no
 * helper or partial registered anywhere can leak into a template, and prototype access stays
 * denied, so template data cannot reach `constructor`, `__proto__` and the like.
 */
import Handlebars from 'handlebars';
import juice from 'juice';
import { TaskError } from './errors.js';

export interface RenderInput {
  subject?: string;
  html?: string;
  text?: string;
  /** Move the rules of <style> elements into style attributes (many mail clients drop <style>). */
  inlineStyles?: boolean;
  data: Record<string, unknown>;
}

export interface RenderOutput {
  subject?: string;
  html?: string;
  text?: string;
}

type Part = 'subject' | 'html' | 'text';

// Explicit rather than relying on the defaults of Handlebars 4.6+, so a future default change
// cannot silently open prototype access.
const RUNTIME_OPTIONS: Handlebars.RuntimeOptions = {
  allowProtoPropertiesByDefault: false,
  allowProtoMethodsByDefault: false,
};

export function renderTemplate(input: RenderInput): RenderOutput {
  const hb = Handlebars.create();
  const out: RenderOutput = {};

  if (input.subject !== undefined) {
    // A subject is one header field: a CR or LF from template data would end it and start a
    // header of the data's choosing (RFC 5322 2.2: a field body must not contain CR or LF).
    out.subject = headerSafe(renderPart(hb, 'subject', input.subject, input.data, true));
  }
  if (input.html !== undefined) {
    const html = renderPart(hb, 'html', input.html, input.data, false);
    out.html = input.inlineStyles ? inlineCss(html) : html;
  }
  if (input.text !== undefined) {
    out.text = renderPart(hb, 'text', input.text, input.data, true);
  }
  return out;
}

/** Replaces every line break (CRLF, CR or LF) by a space. */
export function headerSafe(value: string): string {
  return value.replace(/\r\n|\r|\n/g, ' ');
}

function renderPart(hb: typeof Handlebars, field: Part, source: string, data: Record<string, unknown>, noEscape: boolean): string {
  // Handlebars compiles lazily: a syntax error surfaces on the first call of the template, so
  // compile and call are guarded together.
  try {
    const template = hb.compile(source, { strict: false, noEscape });
    return template(data, RUNTIME_OPTIONS);
  } catch (err) {
    const reason = err instanceof Error ? err.message : String(err);
    throw new TaskError('templating_error', `The ${field} template could not be rendered: ${reason}`, field, { cause: err });
  }
}

function inlineCss(html: string): string {
  try {
    return juice(html);
  } catch (err) {
    const reason = err instanceof Error ? err.message : String(err);
    throw new TaskError('templating_error', `The styles of the html template could not be inlined: ${reason}`, 'html', { cause: err });
  }
}
