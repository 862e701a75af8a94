/**
 * Who may read the daemon's own state (routes/ops.ts). GET /metrics: `metrics.token` as a Bearer
 * token, or, when no token is configured, a client on loopback that did not come through a
 * proxy. The operator routes (/ops/*: the sending IPs, and what acts on them) take the same, and
 * also an account-level API key, or the dashboard session opened with one, of an account the
 * operator named in `metrics.operatorAccounts`: the dashboard's Sources page reaches them with
 * its session like any other page, while another tenant's key is refused (403), as these routes
 * show and change what every account's mail goes out through.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { isIP } from 'node:net';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { AppError, isAppError } from '../domain/errors.js';
import type { StorePort } from '../store/port/index.js';
import { authenticate, sessionCookie } from './auth.js';

/** Throws 401/403 unless the request may read the metrics. */
export function metricsGuard(token: string): (req: FastifyRequest) => void {
  if (!token) {
    return (req) => {
      if (!fromLoopback(req)) {
        throw new AppError('forbidden', 'Metrics are readable from loopback only; set metrics.token to read them remotely');
      }
    };
  }
  const expected = digest(token);
  return (req) => {
    const m = /^Bearer\s+(\S+)\s*$/i.exec(req.headers.authorization ?? '');
    if (!m || !timingSafeEqual(digest(m[1]), expected)) {
      throw new AppError('unauthorized', 'GET /metrics needs Authorization: Bearer <metrics.token>', {
        headers: { 'www-authenticate': 'Bearer realm="postrider metrics"' },
      });
    }
  };
}

export interface OperatorAccessOptions {
  token: string;
  /** Account ids whose account-level keys (and dashboard sessions) may use the operator routes. */
  operatorAccounts: readonly string[];
  store: StorePort;
  /** Counts a refused API key against api.authFailureLimit, as the API's own hook does. */
  countAuthFailure: (req: FastifyRequest) => Promise<void>;
}

/**
 * The operator routes' onRequest hook (GET /ops/sources, DELETE …/shaping/…): the guard runs
 * before the body, the params or the query are parsed, so nothing is parsed for a client that
 * has not authenticated. One per route module, with the app's count of refused keys.
 */
export function operatorOnRequest(app: FastifyInstance, o: Omit<OperatorAccessOptions, 'countAuthFailure'>): (req: FastifyRequest) => Promise<void> {
  return operatorGuard({ ...o, countAuthFailure: (req) => app.countAuthFailure(req) });
}

/** Throws 401/403 unless the request may use the operator routes (see the file's comment). */
export function operatorGuard(o: OperatorAccessOptions): (req: FastifyRequest) => Promise<void> {
  const metricsAllowed = metricsGuard(o.token);
  const operators = new Set(o.operatorAccounts);
  return async (req) => {
    let refusal: unknown;
    try {
      return metricsAllowed(req);
    } catch (err) {
      refusal = err;
    }
    const hasKey = req.headers.authorization !== undefined;
    if (!hasKey && sessionCookie(req.headers.cookie) === undefined) throw refusal;
    try {
      req.principal = await authenticate(o.store, req.headers);
    } catch (err) {
      if (hasKey && isAppError(err) && err.code === 'unauthorized') {
        await o.countAuthFailure(req);
        throw new AppError('unauthorized', 'The operator routes need Authorization: Bearer <metrics.token>, or an account-level API key of an account in metrics.operatorAccounts', {
          headers: { 'www-authenticate': 'Bearer' },
        });
      }
      throw err;
    }
    const { accountId, channelId } = req.principal;
    if (channelId === null && operators.has(accountId)) return;
    throw new AppError(
      'forbidden',
      channelId !== null
        ? 'The operator routes need an account-level key; this is a channel key'
        : `The sending IPs are the daemon's, not one account's: they are shown on the daemon's host (loopback), with metrics.token, or to the accounts listed in metrics.operatorAccounts (this is account ${accountId})`,
    );
  };
}

/**
 * The TCP peer is loopback and no proxy header is present. The socket address, not req.ip:
 * with http.trustProxy req.ip comes from X-Forwarded-For, which a client can write. A reverse
 * proxy on the same host adds that header, so requests it forwards are not taken as local.
 */
function fromLoopback(req: FastifyRequest): boolean {
  if (req.headers['x-forwarded-for'] !== undefined || req.headers.forwarded !== undefined) return false;
  const addr = (req.socket.remoteAddress ?? '').replace(/^::ffff:/i, '');
  if (isIP(addr) === 4) return addr.startsWith('127.');
  return addr === '::1';
}

/** Hashing first gives timingSafeEqual equal lengths, so the token's length does not leak either. */
function digest(s: string): Buffer {
  return createHash('sha256').update(s).digest();
}
