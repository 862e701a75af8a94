/**
 * POST /dashboard/templates/preview-html[?images=1]: the HTML of content that is not stored (the
 * template editor's unsaved edits) rendered with sample data, for the editor's iframe
 * (docs/dashboard.md, Templates). The render is TemplateService.renderDraft, the verb of POST
 * /templates/render, which the editor calls first (subject, text, templating errors); the answer
 * has the policy of GET /dashboard/templates/{id}/html (dashboard-message-html.ts framedHtml).
 *
 * Why a POST that a form makes: the frame cannot show the HTML by srcdoc or a blob: URL, which
 * take the dashboard's own policy (style-src 'self' blocks every inline style of a mail), so the
 * frame must navigate to an answer with its own policy; a GET cannot carry up to
 * templates.maxBytes of draft (Node refuses a request head over 16 KiB), and nothing here stores
 * the draft to name it (a token, a cache) behind the user's back. So the dashboard submits a
 * `<form method=post target=…>` into the named, sandboxed iframe: one field, `draft`, holding
 * the JSON body of POST /templates/render (JSON keeps the line breaks a form would turn into
 * CRLF), validated by the same schema.
 *
 * The security of the GET frame route holds: the request authenticates as an iframe's does
 * (config.frame, server.ts: the session cookie alone, SameSite=Strict, and refused when the
 * browser marks it other than same-origin, Fetch Metadata), before the body is read; it changes
 * nothing, so a replayed form is a render; the answer is sandboxed without scripts (CSP sandbox:
 * an opaque origin, even opened on its own) and framed by the dashboard only (frame-ancestors
 * 'self'). The form parser exists in this route's plugin only: no API route reads form bodies.
 */
import type { FastifyInstance } from 'fastify';
import { AppError } from '../../domain/errors.js';
import type { DraftRenderBody, TemplateService } from '../../templates/service.js';
import { parseJsonBody } from '../json-body.js';
import { framedHtml } from './dashboard-message-html.js';
import { draftRenderBody } from './templates.js';

export const DRAFT_HTML_PATH = '/dashboard/templates/preview-html';
/** Sample data beside the draft: the editor shows the HTML preview up to this much JSON. */
export const MAX_DRAFT_DATA = 64 * 1024;
/** JSON values of one draft (subject, parts, flag and the sample data's values). */
const MAX_VALUES = 20_000;

/** The `draft` field of a form body, parsed as the JSON body of POST /templates/render. */
function draftOfForm(text: string): unknown {
  const form = new URLSearchParams(text);
  const draft = form.getAll('draft');
  if (draft.length !== 1 || [...form.keys()].length !== 1) throw new AppError('bad_request', 'The form has one field, draft: the JSON body of POST /templates/render');
  return parseJsonBody(draft[0], true, MAX_VALUES).value;
}

export function dashboardTemplateDraftHtmlRoutes(templates: TemplateService, maxBytes: number) {
  // Percent-encoding makes at most 3 characters of a byte, JSON's escapes at most 2 of most
  // (quotes, backslashes, line breaks): the largest draft that saves fits, with its data.
  const bodyLimit = 6 * (maxBytes + MAX_DRAFT_DATA);
  return (app: FastifyInstance): void => {
    void app.register(async (scoped) => {
      scoped.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string' }, (_req, body, done) => {
        try {
          done(null, draftOfForm(body as string));
        } catch (err) {
          done(err as Error, undefined);
        }
      });
      const schema = { hide: true, body: draftRenderBody, querystring: { type: 'object', properties: { images: { type: 'string', enum: ['0', '1'] } } } } as const;
      scoped.post(DRAFT_HTML_PATH, { config: { frame: true }, bodyLimit, schema }, async (req, reply) => {
        const out = await templates.renderDraft(req.body as DraftRenderBody);
        if (out.html === undefined) throw new AppError('validation_failed', 'The request body has invalid fields', { errors: { '/html': [{ code: 'required', message: 'the frame shows the html part' }] } });
        return framedHtml(reply, out.html, (req.query as { images?: string }).images === '1');
      });
    });
  };
}
