/**
 * The public engagement endpoints, the only unauthenticated routes besides /health, /ready and
 * /errors: they are reached from inside sent mail, so they carry a signed token
 * (domain/tracking-token.ts) instead of an API key. An altered or forged token is 404 and
 * nothing is recorded or redirected. Tokens travel in the query string because they are longer
 * than a path parameter may be (Fastify's maxParamLength, 100).
 *
 *   GET  /t/open?token=                   1x1 GIF; records `opened`
 *   GET  /t/click?token=                  302 to the URL signed into the token; records `clicked`
 *   GET  /unsubscribe?token=              confirmation page (changes nothing: RFC 8058 1 exists
 *                                         because mail software fetches these URLs on its own)
 *   POST /unsubscribe?token=              one-click unsubscribe (RFC 8058 3.2) and the page's button
 *   POST /unsubscribe/resubscribe?token=  undo
 *
 * A HEAD of the pixel or the redirect (Fastify answers HEAD with the GET route) is answered the
 * same, token checked, without the event: link checkers and mail scanners send HEAD, a reader's
 * mail client or browser never does.
 *
 * Events carry details {ip, userAgent} (and `link` for clicks). When retention has removed the
 * message, opens and clicks are not recorded but the pixel and the redirect still answer, and
 * unsubscribe links keep working from the channel named in their token.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { TokenClaims, TokenKind } from '../../domain/tracking-token.js';
import { claimsOf, isUnsubscribed, recordLinkEvent, resubscribe, unsubscribe } from '../../tracking/service.js';
import type { HttpContext } from '../server.js';

// The smallest transparent GIF (GIF89a, 1x1, one transparent colour).
const PIXEL = Buffer.from('R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7', 'base64');

const TAGS = ['engagement'];
const query = { type: 'object', properties: { token: { type: 'string' } } } as const;
const schema = (summary: string) => ({ summary, tags: TAGS, querystring: query });

/** The one-click form is `List-Unsubscribe=One-Click` (RFC 8058 3.2): a few bytes, 4 KiB at most. */
const FORM_BODY_LIMIT = 4096;

export function trackingRoutes(app: FastifyInstance, { store }: HttpContext): void {
  const claims = (req: FastifyRequest, kind: TokenKind): Promise<TokenClaims> => {
    const token = (req.query as { token?: string }).token ?? '';
    return claimsOf(store, token, kind);
  };

  // A scope of its own: one-click unsubscribe POSTs form data (RFC 8058 3.2), which no other
  // route accepts; the body is not needed, only read and dropped (at most 4 KiB). The limit is
  // the routes' own as well: a route's bodyLimit wins over its parser's, and public routes get
  // server.ts's PUBLIC_BODY_LIMIT (16 KiB) otherwise.
  const form = { bodyLimit: FORM_BODY_LIMIT };
  app.register(async (scope) => {
    scope.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: FORM_BODY_LIMIT }, (_req, _body, done) => done(null, undefined));

    scope.get('/t/open', { config: { public: true }, schema: schema('Open-tracking pixel') }, async (req, reply) => {
      const c = await claims(req, 'open');
      if (req.method !== 'HEAD') await recordLinkEvent(store, 'opened', c, client(req));
      return noStore(reply).type('image/gif').send(PIXEL);
    });

    scope.get('/t/click', { config: { public: true }, schema: schema('Click-tracking redirect') }, async (req, reply) => {
      const c = await claims(req, 'click');
      if (req.method !== 'HEAD') await recordLinkEvent(store, 'clicked', c, { ...client(req), link: c.url });
      return noStore(reply).redirect(c.url!, 302);
    });

    scope.get('/unsubscribe', { config: { public: true }, schema: schema('Unsubscribe confirmation page') }, async (req, reply) => {
      return page(reply, (await isUnsubscribed(store, await claims(req, 'unsubscribe'))) ? 'unsubscribed' : 'confirm', req.url);
    });

    scope.post('/unsubscribe', { ...form, config: { public: true }, schema: schema('One-click unsubscribe (RFC 8058)') }, async (req, reply) => {
      await unsubscribe(store, await claims(req, 'unsubscribe'), client(req));
      return page(reply, 'unsubscribed', req.url);
    });

    scope.post('/unsubscribe/resubscribe', { ...form, config: { public: true }, schema: schema('Undo an unsubscribe') }, async (req, reply) => {
      await resubscribe(store, await claims(req, 'unsubscribe'), client(req));
      return page(reply, 'resubscribed', req.url);
    });
  });
}

function client(req: FastifyRequest): Record<string, unknown> {
  return { ip: req.ip, userAgent: String(req.headers['user-agent'] ?? '').slice(0, 512) };
}

function noStore(reply: FastifyReply): FastifyReply {
  // Tokens are in the URL: no caching by proxies, and no Referer carrying them elsewhere.
  return reply.header('cache-control', 'no-store, private').header('referrer-policy', 'no-referrer');
}

const TEXT = {
  confirm: ['Unsubscribe?', 'You will no longer receive these emails.', 'Unsubscribe', '/unsubscribe'],
  unsubscribed: ['You are unsubscribed', 'You will no longer receive these emails.', 'Resubscribe', '/unsubscribe/resubscribe'],
  resubscribed: ['You are subscribed again', 'You will receive these emails again.', 'Unsubscribe', '/unsubscribe'],
} as const;

/**
 * `target` (one of our paths) relative to the page served at `path`: under a publicUrl with a
 * path (a proxy serving the daemon at https://host/some/path/), a root path would leave it, and
 * the button would post where nothing answers.
 */
function relativeTo(path: string, target: string): string {
  const depth = path.split('/').length - 2;
  return '../'.repeat(Math.max(depth, 0)) + target.slice(1);
}

/** A small self-contained page; the only dynamic part is the token, which is URL-safe base64. */
function page(reply: FastifyReply, state: keyof typeof TEXT, url: string): FastifyReply {
  const [title, text, button, action] = TEXT[state];
  const { pathname, searchParams } = new URL(url, 'http://x');
  const token = searchParams.get('token') ?? '';
  const safe = token.replace(/[^A-Za-z0-9._-]/g, '');
  const html = `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width">
<title>${title}</title><style>body{font:16px system-ui,sans-serif;max-width:32rem;margin:4rem auto;padding:0 1rem}button{font:inherit;padding:.5rem 1rem}</style></head>
<body><h1>${title}</h1><p>${text}</p><form method="post" action="${relativeTo(pathname, action)}?token=${safe}"><button type="submit">${button}</button></form></body></html>`;
  return noStore(reply)
    .header('content-security-policy', "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'")
    .header('x-content-type-options', 'nosniff')
    .type('text/html; charset=utf-8')
    .send(html);
}
