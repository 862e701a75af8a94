/**
 * The HTTP side of the store's request deadline (domain/request-deadline.ts, cluster mode): each
 * request's hooks and handler run in its own scope, so that every store and coordination call it
 * makes (authentication, rate limits, the route's service verb) answers 503 store_timeout once
 * PostgreSQL has left it unanswered for store.requestTimeoutMs; the scope closes with the answer.
 *
 * Entered again before the handler: the body is read on the socket's events, whose callbacks do
 * not carry the context of the onRequest hook that started the read.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { closeScope, inScope, openScope, type DeadlineScope } from '../domain/request-deadline.js';

/** Before every other hook (auth and the rate limits read the store); nothing when ms is 0. */
export function registerRequestDeadline(app: FastifyInstance, ms: number): void {
  if (ms <= 0) return;
  const scopes = new WeakMap<FastifyRequest, DeadlineScope>();
  app.addHook('onRequest', (req, _reply, done) => {
    const scope = openScope(ms);
    if (scope) scopes.set(req, scope);
    inScope(scope, done);
  });
  app.addHook('preHandler', (req, _reply, done) => inScope(scopes.get(req), done));
  app.addHook('onResponse', (req, _reply, done) => {
    closeScope(scopes.get(req));
    done();
  });
}
