/**
 * GET /dashboard/templates/{id|alias}/html?version=N&data=<JSON>: one stored template version's
 * HTML rendered with sample data, for the dashboard's template editor to show in an iframe
 * (docs/dashboard.md, Templates). The editor renders through POST /templates/{id}/render first
 * (subject, text, templating errors); the HTML goes through this route only because an iframe's
 * srcdoc inherits the dashboard's CSP (style-src 'self'), which blocks the inline styles every
 * mail has (and logs each one as a console error). Here it gets the policy of a message's HTML
 * (dashboard-message-html.ts messageHtmlCsp: sandboxed opaque origin, inline styles, data:/cid:
 * images, remote images only with ?images=1, framed by the dashboard only).
 *
 * The render is TemplateService.render, the verb of POST /templates/{id}/render, so access is the
 * API's (another account's template 403, an unknown one 404) and the HTML is what the API
 * answers. The data travels in the query because an iframe navigates with a GET: at most
 * MAX_DATA characters of JSON (the request line stays far below Node's 16 KiB header limit).
 */
import type { FastifyInstance } from 'fastify';
import { AppError } from '../../domain/errors.js';
import type { TemplateService } from '../../templates/service.js';
import { framedHtml } from './dashboard-message-html.js';

export const MAX_DATA = 8_000;

const schema = {
  hide: true,
  params: { type: 'object', properties: { idOrAlias: { type: 'string', maxLength: 100 } }, required: ['idOrAlias'] },
  querystring: {
    type: 'object',
    required: ['version'],
    properties: {
      version: { type: 'integer', minimum: 1, maximum: 1_000_000 },
      data: { type: 'string', maxLength: MAX_DATA },
      images: { type: 'string', enum: ['0', '1'] },
    },
  },
} as const;

/** The sample data: a JSON object, as the render's `data` (422 on /data otherwise). */
function sampleData(raw: string | undefined): Record<string, unknown> {
  let value: unknown = {};
  try {
    if (raw !== undefined) value = JSON.parse(raw);
  } catch {
    value = undefined;
  }
  if (typeof value === 'object' && value !== null && !Array.isArray(value)) return value as Record<string, unknown>;
  throw new AppError('validation_failed', 'The query has invalid parameters', { errors: { '/data': [{ code: 'invalid_type', message: 'must be a JSON object' }] } });
}


export function dashboardTemplateHtmlRoutes(templates: TemplateService) {
  return (app: FastifyInstance): void => {
    app.get('/dashboard/templates/:idOrAlias/html', { config: { frame: true }, schema }, async (req, reply) => {
      const q = req.query as { version: number; data?: string; images?: string };
      const idOrAlias = (req.params as { idOrAlias: string }).idOrAlias;
      const out = await templates.render(req.principal, idOrAlias, { data: sampleData(q.data), version: q.version });
      if (out.html === undefined) throw new AppError('not_found', `Version ${out.version} of template ${idOrAlias} has no HTML part`);
      return framedHtml(reply, out.html, q.images === '1');
    });
  };
}
