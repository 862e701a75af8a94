/**
 * /api-keys: an account's API keys over the API (ApiKeyService holds the rules: account-level
 * keys only, another account's key 403, the secret answered once at creation).
 */
import type { FastifyInstance } from 'fastify';
import type { ApiKeyService } from '../../api-keys/account-keys.js';
import type { ApiKey } from '../../domain/types.js';
import type { ApiKeySummary, CreatedApiKey, Page } from '../../domain/wire.js';
import { pagingProperties } from '../schemas.js';

/** As a channel's name: no control characters, not blank. */
const nameSchema = { type: 'string', minLength: 1, maxLength: 100, pattern: '^(?:(?=.*\\S)[^\\u0000-\\u001f\\u007f]*)?$' } as const;

const createBody = {
  type: 'object',
  additionalProperties: false,
  properties: { name: nameSchema, channelId: { type: 'string', format: 'uuid' } },
} as const;

const listQuery = { type: 'object', additionalProperties: false, properties: pagingProperties } as const;

/** What a listing shows of a key: never the secret or its hash, the prefix to tell keys apart. */
export function apiKeySummary(k: ApiKey): ApiKeySummary {
  return { id: k.id, name: k.name, channelId: k.channelId, prefix: k.prefix, createdAt: k.createdAt };
}

export const apiKeyRoutes = (keys: ApiKeyService) => (app: FastifyInstance): void => {
  app.get('/api-keys', { schema: { querystring: listQuery } }, async (req): Promise<Page<ApiKeySummary>> => {
    const q = req.query as { limit?: number; offset?: number };
    const { results, totalCount } = await keys.list(req.principal, { limit: q.limit ?? 25, offset: q.offset ?? 0 });
    return { results: results.map(apiKeySummary), totalCount };
  });

  app.post('/api-keys', { schema: { body: createBody } }, async (req): Promise<CreatedApiKey> => {
    const { key, token } = await keys.create(req.principal, (req.body ?? {}) as { name?: string; channelId?: string });
    return { ...apiKeySummary(key), key: token };
  });

  app.delete('/api-keys/:id', async (req, reply) => {
    await keys.revoke(req.principal, (req.params as { id: string }).id);
    return reply.code(204).send();
  });
};
