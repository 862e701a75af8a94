/**
 * The web dashboard's files (docs/dashboard.md): the Vite build in dist/dashboard, served
 * under /dashboard on the API's port. The files are read once when the routes are registered
 * (a fixed map: no path from a request ever reaches the file system). Hashed assets are
 * immutable (RFC 8246); index.html is `no-cache` so a new build is picked up at once; any other
 * /dashboard/* path answers index.html, the client-side router's pages (a reload, a shared link).
 *
 * Every /dashboard response, problems included, carries a strict Content-Security-Policy
 * (scripts, styles and connections from this origin only, no framing by others, no plugins),
 * X-Content-Type-Options: nosniff and Referrer-Policy: no-referrer.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../../domain/errors.js';
import type { RouteModule } from '../server.js';

export const DASHBOARD_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "frame-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.woff2': 'font/woff2',
  '.txt': 'text/plain; charset=utf-8',
};

interface StaticFile {
  body: Buffer;
  type: string;
  cacheControl: string;
}

/** Every file under `root` by its path relative to it ("index.html", "assets/index-abc.js"). */
function readBuild(root: string): Map<string, StaticFile> {
  const files = new Map<string, StaticFile>();
  if (!fs.existsSync(path.join(root, 'index.html'))) return files;
  for (const rel of fs.readdirSync(root, { recursive: true, encoding: 'utf8' })) {
    const full = path.join(root, rel);
    if (!fs.statSync(full).isFile()) continue;
    const name = rel.split(path.sep).join('/');
    // Vite names every file under assets/ by its content hash: it never changes under one name.
    const cacheControl = name.startsWith('assets/') ? 'public, max-age=31536000, immutable' : 'no-cache';
    files.set(name, { body: fs.readFileSync(full), type: TYPES[path.extname(name)] ?? 'application/octet-stream', cacheControl });
  }
  return files;
}

function send(reply: FastifyReply, file: StaticFile) {
  return reply.header('cache-control', file.cacheControl).type(file.type).send(file.body);
}

/** The dashboard routes over the build in `root` (dist/dashboard). */
export function dashboardRoutes(root: string): RouteModule {
  return (app: FastifyInstance) => {
    const files = readBuild(root);
    app.addHook('onSend', async (req, reply) => {
      // The matched route's path, not the request's: the router decodes percent-escapes, so
      // /%64ashboard is the dashboard too. An unmatched request (a 404 problem) has only its own.
      const path = req.routeOptions.url ?? req.url;
      if (path !== '/dashboard' && !path.startsWith('/dashboard/') && !path.startsWith('/dashboard?')) return;
      // A message's HTML (dashboard-message-html.ts) sets a policy of its own, for a frame of this page.
      if (reply.getHeader('content-security-policy') !== undefined) return;
      reply.header('content-security-policy', DASHBOARD_CSP);
      reply.header('x-content-type-options', 'nosniff');
      reply.header('referrer-policy', 'no-referrer');
      reply.header('x-frame-options', 'DENY');
    });
    const page = async (req: FastifyRequest, reply: FastifyReply) => {
      const index = files.get('index.html');
      if (!index) throw new AppError('service_unavailable', `The dashboard is not built (no ${path.join(root, 'index.html')}); run npm run build`);
      const rest = (req.params as { '*'?: string })['*'] ?? '';
      const file = files.get(rest);
      if (file) return send(reply, file);
      // A missing asset is a 404: answering the page would hand a script tag HTML. Only a file
      // type the build makes counts as an asset: a page path may end in a domain (".net").
      if (rest.startsWith('assets/') || path.extname(rest).toLowerCase() in TYPES) throw new AppError('not_found', `No dashboard file ${rest}`);
      return send(reply, index);
    };
    const options = { config: { public: true }, schema: { hide: true } };
    // The root leads a person who opened the daemon's address in a browser to the dashboard
    // (RFC 9110 15.4.3 302, relative Location per 10.2.2), instead of a 404 problem.
    app.get('/', options, async (_req, reply) => reply.redirect('/dashboard', 302));
    app.get('/dashboard', options, page);
    app.get('/dashboard/*', options, page);
  };
}
