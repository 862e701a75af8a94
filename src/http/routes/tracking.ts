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
 * Events carry details {ip, userAgent} (and `link` for clicks). When retention has removed the
 * message, opens and clicks are not recorded but the pixel and the redirect still answer, and
 * unsubscribe links keep working from the channel named in their token.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../../domain/errors.js';
import { verifyToken, type TokenClaims, type TokenKind } from '../../domain/tracking-token.js';
import { getChannel } from '../../store/channels.js';
import { recordEngagement, recordResubscribe, recordUnsubscribe, subjectOf, type EventSubject } from '../../store/engagement.js';
import type { Store } from '../../store/env.js';
import { getMessage } from '../../store/messages.js';
import { getSuppression } from '../../store/suppressions.js';
import { trackingSecret } from '../../store/secrets.js';
import type { HttpContext } from '../server.js';

// The smallest transparent GIF (GIF89a, 1x1, one transparent colour).
const PIXEL = Buffer.from('R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7', 'base64');

const TAGS = ['engagement'];
const query = { type: 'object', properties: { token: { type: 'string' } } } as const;
const schema = (summary: string) => ({ summary, tags: TAGS, querystring: query });

export function trackingRoutes(app: FastifyInstance, { store }: HttpContext): void {
  const claims = (req: FastifyRequest, kind: TokenKind): TokenClaims => {
    const token = (req.query as { token?: string }).token ?? '';
    const c = verifyToken(trackingSecret(store), token, kind);
    if (!c) throw new AppError('not_found', 'Unknown or invalid link');
    return c;
  };

  // A scope of its own: one-click unsubscribe POSTs form data (RFC 8058 3.2), which no other
  // route accepts; the body is not needed, only read and dropped (at most 4 KiB).
  app.register(async (scope) => {
    scope.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: 4096 }, (_req, _body, done) => done(null, undefined));

    scope.get('/t/open', { config: { public: true }, schema: schema('Open-tracking pixel') }, async (req, reply) => {
      const c = claims(req, 'open');
      const message = getMessage(store, c.messageId);
      if (message) await recordEngagement(store, 'opened', { subject: subjectOf(message), recipients: recipientsOf(c, message.recipients), details: client(req) });
      return noStore(reply).type('image/gif').send(PIXEL);
    });

    scope.get('/t/click', { config: { public: true }, schema: schema('Click-tracking redirect') }, async (req, reply) => {
      const c = claims(req, 'click');
      const message = getMessage(store, c.messageId);
      if (message) {
        await recordEngagement(store, 'clicked', { subject: subjectOf(message), recipients: recipientsOf(c, message.recipients), details: { ...client(req), link: c.url } });
      }
      return noStore(reply).redirect(c.url!, 302);
    });

    scope.get('/unsubscribe', { config: { public: true }, schema: schema('Unsubscribe confirmation page') }, async (req, reply) => {
      const target = unsubscribeTarget(store, claims(req, 'unsubscribe'));
      const done = target.recipients.length > 0 && target.recipients.every((r) => getSuppression(store, target.subject.channelId, target.subject.mailType, r)?.reason === 'unsubscribe');
      return page(reply, done ? 'unsubscribed' : 'confirm', req.url);
    });

    scope.post('/unsubscribe', { config: { public: true }, schema: schema('One-click unsubscribe (RFC 8058)') }, async (req, reply) => {
      const target = unsubscribeTarget(store, claims(req, 'unsubscribe'));
      await recordUnsubscribe(store, { ...target, details: client(req) });
      return page(reply, 'unsubscribed', req.url);
    });

    scope.post('/unsubscribe/resubscribe', { config: { public: true }, schema: schema('Undo an unsubscribe') }, async (req, reply) => {
      const target = unsubscribeTarget(store, claims(req, 'unsubscribe'));
      await recordResubscribe(store, { ...target, details: client(req) });
      return page(reply, 'resubscribed', req.url);
    });
  });
}

/** The token's recipient, or every recipient of a message rendered for several. */
function recipientsOf(c: TokenClaims, all: string[]): string[] {
  return c.recipient ? [c.recipient] : all;
}

/** Whom an unsubscribe link is about, with or without the message (retention). */
function unsubscribeTarget(store: Store, c: TokenClaims): { subject: EventSubject; recipients: string[] } {
  const channel = getChannel(store, c.channelId!);
  if (!channel) throw new AppError('not_found', 'This list no longer exists');
  const message = getMessage(store, c.messageId);
  const subject: EventSubject = message
    ? subjectOf(message)
    : { accountId: channel.accountId, channelId: channel.id, messageId: c.messageId, mailType: 'broadcast', mailSource: 'api', subject: '', tags: [], metadata: {} };
  const recipients = recipientsOf(c, message?.recipients ?? []);
  if (recipients.length === 0) throw new AppError('not_found', 'This link has expired');
  return { subject, recipients };
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

/** A small self-contained page; the only dynamic part is the token, which is URL-safe base64. */
function page(reply: FastifyReply, state: keyof typeof TEXT, url: string): FastifyReply {
  const [title, text, button, action] = TEXT[state];
  const token = new URL(url, 'http://x').searchParams.get('token') ?? '';
  const safe = token.replace(/[^A-Za-z0-9._-]/g, '');
  const html = `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width">
<title>${title}</title><style>body{font:16px system-ui,sans-serif;max-width:32rem;margin:4rem auto;padding:0 1rem}button{font:inherit;padding:.5rem 1rem}</style></head>
<body><h1>${title}</h1><p>${text}</p><form method="post" action="${action}?token=${safe}"><button type="submit">${button}</button></form></body></html>`;
  return noStore(reply)
    .header('content-security-policy', "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'")
    .header('x-content-type-options', 'nosniff')
    .type('text/html; charset=utf-8')
    .send(html);
}
