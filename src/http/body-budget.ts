/**
 * The server-wide budget of request body bytes buffered at once (http.bodyBufferLimit, issue 29).
 * http.bodyLimit bounds one body; without this, N clients sending N bodies of that size at once
 * would take N times it of memory, and a few 40 MiB bodies (each parsed into several times its
 * size) exhaust a 1 GB heap. A body is charged before it is read: its Content-Length up front,
 * a chunked body (no length) chunk by chunk as it streams in. A body that would take the total
 * over the budget is refused with 503 service_unavailable and Retry-After (RFC 9110 15.6.4: a
 * temporary overload); its charge is released when the answer is sent or the connection is gone.
 */
import { Transform, type Readable } from 'node:stream';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../domain/errors.js';

/** What a refused client is told to wait: buffered bodies are usually read and answered within it. */
export const BODY_BUDGET_RETRY_AFTER_S = 1;

/** Methods whose body Fastify never reads: nothing of theirs is buffered. */
const BODYLESS = new Set(['GET', 'HEAD', 'TRACE']);

export class BodyBudget {
  private used = 0;

  constructor(readonly limitBytes: number) {}

  /** Bytes charged now, over all requests in flight. */
  get inUse(): number {
    return this.used;
  }

  /** Charges `bytes` when they fit in what is left; false (nothing charged) when not. */
  take(bytes: number): boolean {
    if (this.used + bytes > this.limitBytes) return false;
    this.used += bytes;
    return true;
  }

  give(bytes: number): void {
    this.used -= bytes;
  }

  refusal(): AppError {
    return new AppError('service_unavailable', `The server is receiving too many request bodies at once (http.bodyBufferLimit); retry in ${BODY_BUDGET_RETRY_AFTER_S} s`, {
      headers: { 'retry-after': String(BODY_BUDGET_RETRY_AFTER_S) },
    });
  }
}

/** A pass-through stream that charges each chunk to `budget` before handing it on. */
function charging(payload: Readable, budget: BodyBudget, charged: (bytes: number) => void, answered: () => boolean): Readable {
  const counted = new Transform({
    transform(chunk: Buffer, _enc, next) {
      // Once answered, what still comes (a lingering close reads it: lingering-close.ts) is
      // dropped uncharged: charged, it was never given back, and the budget ran dry for everyone.
      if (answered()) return next();
      if (!budget.take(chunk.length)) return next(budget.refusal());
      charged(chunk.length);
      next(null, chunk);
    },
  });
  payload.on('error', (err) => counted.destroy(err));
  // Fastify listens on `counted` only while it reads the body. A request answered without reading
  // it (no or another content type: 415; an error before the parser) leaves it without a
  // listener, and a stream that emits 'error' with none throws: one chunked request with broken
  // framing and no Content-Type, to a public route, ended the daemon (the client's abort, or a
  // refusal of the budget, is an 'error' here). The request is answered or gone by then, so the
  // error needs nobody; while Fastify reads, its own listener gets it as well.
  counted.on('error', () => undefined);
  return payload.pipe(counted);
}

/**
 * Charges the body of the request to the budget; returns the stream Fastify reads the body from.
 * Bodies over the route's bodyLimit are left to Fastify's 413 (they are never buffered).
 */
function charge(budget: BodyBudget, req: FastifyRequest, reply: FastifyReply, payload: Readable): Readable {
  const declared = req.headers['content-length'];
  const chunked = declared === undefined && req.headers['transfer-encoding'] !== undefined;
  if (reply.raw.destroyed) return payload; // the client is gone: nothing more will be read
  let held = 0;
  if (declared !== undefined) {
    const bytes = Number(declared);
    if (!(bytes > 0) || bytes > req.routeOptions.bodyLimit) return payload;
    if (!budget.take(bytes)) throw budget.refusal();
    held = bytes;
  } else if (!chunked) {
    return payload; // no body
  }
  // 'close' comes once the answer is sent or the connection is gone (an aborted upload too).
  let answered = false;
  reply.raw.once('close', () => {
    answered = true;
    budget.give(held);
    held = 0;
  });
  return chunked ? charging(payload, budget, (bytes) => (held += bytes), () => answered) : payload;
}

/** Registers the preParsing hook; returns the budget (for its tests and metrics). */
export function registerBodyBudget(app: FastifyInstance, limitBytes: number): BodyBudget {
  const budget = new BodyBudget(limitBytes);
  app.addHook('preParsing', async (req, reply, payload) => (BODYLESS.has(req.method) ? payload : charge(budget, req, reply, payload)));
  return budget;
}
