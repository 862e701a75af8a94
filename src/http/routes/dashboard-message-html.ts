/**
 * GET /dashboard/messages/{id}/html: the stored HTML of one message, for the dashboard's message
 * page to show in an iframe (docs/dashboard.md). An iframe's srcdoc would inherit the
 * dashboard's CSP (style-src 'self'), which blocks the inline styles every mail has; served
 * from its own URL the HTML gets a policy of its own instead:
 *
 * - `sandbox` (CSP3; the iframe also has sandbox="") makes it a unique opaque origin with
 *   scripts, forms, popups and top navigation off, so nothing in a mail runs or reaches the
 *   dashboard's origin, cookies or API;
 * - `default-src 'none'` with inline styles and `data:`/`cid:` images only, remote images
 *   (`https: http:`) only with `?images=1`, after the user asked (a remote image is a read
 *   receipt and a tracker);
 * - `frame-ancestors 'self'`: only the dashboard frames it.
 *
 * It is read like GET /activity/messages/{id} (activity/queries.ts visibleMessage: another
 * account's message is 403, an unknown one 404). An iframe's request cannot carry the
 * X-Postrider-Dashboard header, so the session cookie alone authenticates it (the route's
 * `frame` config: auth.ts authenticateFrame, in the server's hook; a request a browser marks as
 * cross-site is refused outright), or an API key as on the API.
 */
import type { FastifyInstance, FastifyReply } from 'fastify';
import { ActivityReads } from '../../activity/queries.js';
import { AppError } from '../../domain/errors.js';
import type { HttpContext } from '../server.js';

/** The policy of a message's HTML; remote images only when the user asked for them. */
export function messageHtmlCsp(remoteImages: boolean): string {
  const img = remoteImages ? 'img-src data: cid: https: http:' : 'img-src data: cid:';
  return ['sandbox', "default-src 'none'", "style-src 'unsafe-inline'", img, "frame-ancestors 'self'"].join('; ');
}

/** HTML for one of the dashboard's frames (a message's, a template version's, a draft's): the sandboxing policy above, never cached. */
export function framedHtml(reply: FastifyReply, html: string, remoteImages: boolean): FastifyReply {
  // The dashboard's onSend hook (dashboard.ts) leaves an answer that set its own policy alone.
  return reply
    .header('content-security-policy', messageHtmlCsp(remoteImages))
    .header('x-content-type-options', 'nosniff')
    .header('referrer-policy', 'no-referrer')
    .header('cache-control', 'no-store')
    .type('text/html; charset=utf-8')
    .send(html);
}

export function dashboardMessageHtmlRoutes(app: FastifyInstance, { store }: HttpContext): void {
  const reads = new ActivityReads(store);
  const schema = {
    hide: true,
    params: { type: 'object', properties: { id: { type: 'string', maxLength: 64 } }, required: ['id'] },
    querystring: { type: 'object', properties: { images: { type: 'string', enum: ['0', '1'] } } },
  } as const;
  app.get('/dashboard/messages/:id/html', { config: { frame: true }, schema }, async (req, reply) => {
    const m = await reads.visibleMessage(req.principal, (req.params as { id: string }).id);
    if (m.html === undefined) throw new AppError('not_found', `Message ${m.id} has no HTML part`);
    const images = (req.query as { images?: string }).images === '1';
    return framedHtml(reply, m.html, images);
  });
}
