/**
 * Renders the subject, html and text parts of a message template with Handlebars.
 *
 * `{{var}}` is HTML-escaped and `{{{var}}}` is inserted raw, in the html part only: the
 * subject and the text part are not HTML, so escaping there would put `&amp;` into what the
 * recipient reads. Templates compile in a private Handlebars environment (`Handlebars.create()`)
 * in which nothing registers helpers or partials, so none registered elsewhere can leak into a
 * template, and prototype access stays denied, so template data cannot reach `constructor`,
 * `__proto__` and the like.
 *
 * Compiled templates are remembered per worker thread: a broadcast renders the same three
 * sources for every entry, and compiling them again each time cost as much as the RSA signature
 * (bench/RESULTS.md, broadcast section).
 */
import Handlebars from 'handlebars';
import juice from 'juice';
import { TaskError } from './errors.js';
import { Lru } from './lru.js';

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

const hb = Handlebars.create();
type Compiled = ReturnType<typeof hb.compile>;
/** Keyed by escaping mode and source. Exported for tests. */
export const templateCache = new Lru<string, Compiled>(200);

export function renderTemplate(input: RenderInput): RenderOutput {
  const out: RenderOutput = {};

  if (input.subject !== undefined) {
    // A subject is one header field: a CR or LF from template data would end it and start a
    // header of the data's choosing (RFC 5322 2.2: a field body must not contain CR or LF).
    out.subject = headerSafe(renderPart('subject', input.subject, input.data, true));
  }
  if (input.html !== undefined) {
    const html = renderPart('html', input.html, input.data, false);
    out.html = input.inlineStyles ? inlineCss(html) : html;
  }
  if (input.text !== undefined) {
    out.text = renderPart('text', input.text, input.data, true);
  }
  return out;
}

/** Replaces every line break (CRLF, CR or LF) by a space. */
export function headerSafe(value: string): string {
  return value.replace(/\r\n|\r|\n/g, ' ');
}

function renderPart(field: Part, source: string, data: Record<string, unknown>, noEscape: boolean): string {
  // Handlebars compiles lazily: a syntax error surfaces on the first call of the template, so
  // compile and call are guarded together (a template that does not compile throws on every
  // call, cached or not).
  try {
    const template = templateCache.get(`${noEscape ? 't' : 'h'}:${source}`, () => hb.compile(source, { strict: false, noEscape }));
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
