/**
 * DELETE /ops/sources/{source}/shaping/{site}: an operator ends an automatic shaping of a
 * sending source early (issue 35; delivery/shaping-gate.ts), for the whole cluster, e.g. once
 * the provider confirmed the block is gone. {site} is the shaping's `site` in GET /ops/sources:
 * an MX site, or `provider:<id>` for a rule that holds at every site of a provider. The access
 * of GET /ops/sources (http/operator-access.ts): the metrics token, loopback without one, or an
 * account-level key or dashboard session of an account in metrics.operatorAccounts; the
 * dashboard's Sources page lifts through it.
 */
import type { FastifyInstance } from 'fastify';
import { AppError } from '../../domain/errors.js';
import { operatorOnRequest } from '../operator-access.js';
import type { HttpContext, RouteModule } from '../server.js';

export interface ShapingLifter {
  /** Ends the shaping of `source` at `site` now; false when none holds. */
  lift(source: string, site: string): Promise<boolean>;
}

const liftSchema = {
  summary: 'End an automatic shaping of a sending source early',
  description:
    'Lifts the suspension or ceiling an automatic shaping rule put on the source at the site (`site` as GET /ops/sources shows it: an MX site, or `provider:<id>`), on every node. 404 when none holds. Access as GET /ops/sources.',
  tags: ['operations'],
  params: {
    type: 'object',
    properties: { source: { type: 'string', minLength: 1, maxLength: 64 }, site: { type: 'string', minLength: 1, maxLength: 2000 } },
    required: ['source', 'site'],
  },
  response: { 204: { type: 'null', description: 'Lifted' } },
} as const;

export function opsShapingRoutes(shaping: ShapingLifter): RouteModule {
  return (app: FastifyInstance, { config, store }: HttpContext) => {
    const operator = operatorOnRequest(app, { ...config.metrics, store });
    app.delete<{ Params: { source: string; site: string } }>('/ops/sources/:source/shaping/:site', { config: { public: true }, schema: liftSchema, onRequest: operator }, async (req, reply) => {
      const { source, site } = req.params;
      if (!(await shaping.lift(source, site))) throw new AppError('not_found', `No automatic shaping of source "${source}" at "${site}" holds now`);
      return reply.code(204).send();
    });
  };
}
