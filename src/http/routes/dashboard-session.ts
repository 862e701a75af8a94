/**
 * The web dashboard's session (docs/dashboard.md): POST /dashboard/session trades an
 * account-level API key for an HttpOnly, SameSite=Strict cookie (RFC 6265bis), GET tells the
 * app whether it is signed in (200 either way), DELETE signs out. The verbs are
 * sessions/service.ts's; auth.ts accepts the cookie on the API routes.
 *
 * POST and DELETE need X-Postrider-Dashboard: 1 like every cookie request (no login or logout
 * forged from another site). A refused key counts against api.authFailureLimit.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../../domain/errors.js';
import { closeSession, openSession, SESSION_ABSOLUTE_MS, sessionInfo } from '../../sessions/service.js';
import { fromDashboard, SESSION_COOKIE, sessionCookie } from '../auth.js';
import type { HttpContext } from '../server.js';
import type { DashboardSession, DashboardSessionAnswer } from '../../domain/wire.js';

const TAGS = ['dashboard'];

const sessionInfoSchema = {
  type: 'object',
  properties: {
    accountId: { type: 'string' },
    keyId: { type: 'string' },
    expiresAt: { type: 'string', format: 'date-time' },
    idleExpiresAt: { type: 'string', format: 'date-time' },
  },
  required: ['accountId', 'keyId', 'expiresAt', 'idleExpiresAt'],
} as const;

const loginSchema = {
  summary: 'Sign in to the dashboard with an account-level API key',
  tags: TAGS,
  body: {
    type: 'object',
    additionalProperties: false,
    required: ['apiKey'],
    properties: { apiKey: { type: 'string', minLength: 1, maxLength: 300 } },
  },
  response: { 200: { type: 'object', properties: { session: sessionInfoSchema }, required: ['session'] } },
} as const;

const currentSchema = {
  summary: 'The dashboard session of the cookie, or null',
  tags: TAGS,
  response: { 200: { type: 'object', properties: { session: { anyOf: [sessionInfoSchema, { type: 'null' }] } }, required: ['session'] } },
} as const;

const logoutSchema = { summary: 'Sign out of the dashboard', tags: TAGS } as const;

function requireDashboardHeader(req: FastifyRequest): void {
  if (!fromDashboard(req.headers)) throw new AppError('unauthorized', 'Dashboard session requests need the header X-Postrider-Dashboard: 1');
}

export function dashboardSessionRoutes(app: FastifyInstance, { store, config, publicUrl }: HttpContext): void {
  const secure = () => ((publicUrl?.value ?? config.publicUrl) || '').startsWith('https:');
  const cookie = (value: string, maxAgeS: number) =>
    `${SESSION_COOKIE}=${value}; Path=/; Max-Age=${maxAgeS}; HttpOnly; SameSite=Strict${secure() ? '; Secure' : ''}`;
  const options = { config: { public: true } };

  app.post('/dashboard/session', { ...options, schema: loginSchema }, async (req, reply: FastifyReply): Promise<DashboardSessionAnswer<DashboardSession>> => {
    requireDashboardHeader(req);
    const { apiKey } = req.body as { apiKey: string };
    const opened = await openSession(store, apiKey).catch(async (err: unknown) => {
      if (err instanceof AppError && err.code === 'unauthorized') await app.countAuthFailure(req);
      throw err;
    });
    reply.header('set-cookie', cookie(opened.token, Math.floor(SESSION_ABSOLUTE_MS / 1000)));
    reply.header('cache-control', 'no-store');
    return { session: opened.info };
  });

  app.get('/dashboard/session', { ...options, schema: currentSchema }, async (req, reply): Promise<DashboardSessionAnswer> => {
    reply.header('cache-control', 'no-store');
    return { session: await sessionInfo(store, sessionCookie(req.headers.cookie)) };
  });

  app.delete('/dashboard/session', { ...options, schema: logoutSchema }, async (req, reply) => {
    requireDashboardHeader(req);
    await closeSession(store, sessionCookie(req.headers.cookie));
    return reply.header('set-cookie', cookie('', 0)).code(204).send();
  });
}
