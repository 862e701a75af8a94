/**
 * The principal of a request an iframe of the dashboard makes (a message's HTML, a template's
 * preview): such a request cannot carry X-Postrider-Dashboard, so the session cookie alone
 * authenticates it (auth.ts authenticateFrame refuses one a browser marks as cross-site), or an
 * API key as on the API, whose refusals count against api.authFailureLimit as there (server.ts).
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { isAppError } from '../domain/errors.js';
import type { Principal } from '../domain/types.js';
import type { StorePort } from '../store/port/index.js';
import { authenticateFrame } from './auth.js';

export async function framePrincipal(app: FastifyInstance, store: StorePort, req: FastifyRequest): Promise<Principal> {
  try {
    return await authenticateFrame(store, req.headers);
  } catch (err) {
    if (req.headers.authorization !== undefined && isAppError(err) && err.code === 'unauthorized') await app.countAuthFailure(req);
    throw err;
  }
}
