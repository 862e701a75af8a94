/**
 * GET /openapi.json: an OpenAPI 3.1 document built by @fastify/swagger from the very schemas
 * Fastify validates requests with, so the document cannot drift from the behaviour.
 *
 * @fastify/swagger learns routes through an onRoute hook, and Fastify runs onRoute hooks at the
 * moment a route is declared. HttpServer.build() declares routes synchronously, before Fastify
 * would load a plugin given to app.register(), so registerOpenApi calls the plugin function
 * directly on the root instance (what fastify-plugin's skip-override would give it anyway; the
 * dynamic mode only adds hooks and a decorator, synchronously). Call it before the first route.
 */
import fastifySwagger from '@fastify/swagger';
import type { FastifyInstance } from 'fastify';
import type { Config } from '../config/schema.js';
import { applyContract } from './contract.js';

export const OPENAPI_PATH = '/openapi.json';

/** publicUrl: read per request, as the effective value is known only once the listener bound. */
/** The configuration the document reads: the default of `servers`. */
export type OpenApiSettings = Pick<Config, 'publicUrl'>;

export function registerOpenApi(app: FastifyInstance, config: OpenApiSettings, publicUrl: () => string = () => config.publicUrl): void {
  let failure: Error | undefined;
  fastifySwagger(
    app,
    {
      mode: 'dynamic',
      openapi: {
        openapi: '3.1.0',
        info: { title: 'postrider Email Delivery Service API', version: '1.0.0' },
        components: {
          securitySchemes: {
            bearerAuth: { type: 'http', scheme: 'bearer', description: 'An account-level or channel-level API key (pr_...).' },
          },
        },
        security: [{ bearerAuth: [] }],
      },
      // Keep `const` (JSON Schema 2020-12 is OpenAPI 3.1's schema dialect).
      convertConstToEnum: false,
      // Public routes (config.public) need no credential: say so per operation.
      transform: ({ schema, url, route }) => ({
        url,
        schema: route.config?.public ? { ...schema, security: [] } : schema,
      }),
      // Error responses, headers, operationIds, ids as UUIDs: contract.ts, on the document only.
      transformObject: (doc) => applyContract(structuredClone((doc as { openapiObject: Record<string, unknown> }).openapiObject)),
    },
    (err?: Error) => {
      failure = err;
    },
  );
  if (failure) throw failure;

  app.get(OPENAPI_PATH, { config: { public: true }, schema: { hide: true } }, async () => ({ ...app.swagger(), servers: [{ url: publicUrl() }] }));
}
