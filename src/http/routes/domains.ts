/**
 * /domains: spec 4.6-4.9 and the DESIGN.md additions (create, list, rotate-key).
 *
 * Access: writes need an account-level key. A channel key may read (and verify) only the domains
 * linked to its channel. Another account's domain is 403; an unknown one 404 not_found.
 */
import type { FastifyInstance } from 'fastify';
import { normalizeDomainName } from '../../domain/domain-name.js';
import { AppError, FieldErrorList, pointerSegment } from '../../domain/errors.js';
import type { DkimAlgorithm, DnsRecordState, SendingDomain } from '../../domain/sending-domain.js';
import type { SetupWarning } from '../../domain/setup-warnings.js';
import type { Principal } from '../../domain/types.js';
import { channelFor } from '../../channels/service.js';
import type { DomainService } from '../../domains/service.js';
import type { Store } from '../../store/env.js';
import { requireAccountKey } from '../auth.js';
import { dkimAlgorithmSchema, pagingProperties } from '../schemas.js';
import { channelIdsFilter, schemaErrors } from '../query-params.js';
import type { HttpContext } from '../server.js';

const channelIdsSchema = { type: 'array', maxItems: 1000, items: { type: 'string', format: 'uuid' } } as const;

const createBody = {
  type: 'object',
  additionalProperties: false,
  required: ['name'],
  // Unicode input may be longer in characters than its punycode form; the name check counts that.
  properties: { name: { type: 'string', minLength: 1, maxLength: 253 }, channelIds: channelIdsSchema, dkimAlgorithm: dkimAlgorithmSchema },
} as const;

const updateBody = {
  type: 'object',
  additionalProperties: false,
  required: ['channelIds'],
  properties: { channelIds: channelIdsSchema },
} as const;

/**
 * The rotate-key body is optional ({dkimAlgorithm?}), so it is checked here rather than by a
 * route schema, which would also refuse a request without a body (and before the access check).
 */
function rotateAlgorithm(body: unknown): DkimAlgorithm | undefined {
  if (body === undefined || body === null) return undefined;
  const errors = new FieldErrorList();
  if (typeof body !== 'object' || Array.isArray(body)) {
    errors.add('/', 'invalid_type', 'must be an object');
  } else {
    for (const k of Object.keys(body)) if (k !== 'dkimAlgorithm') errors.add(`/${pointerSegment(k)}`, 'unknown_field', 'is not a known field');
    const algorithm = (body as { dkimAlgorithm?: unknown }).dkimAlgorithm;
    if (algorithm !== undefined && !dkimAlgorithmSchema.enum.includes(algorithm as DkimAlgorithm)) {
      errors.add('/dkimAlgorithm', 'invalid_value', `must be one of: ${dkimAlgorithmSchema.enum.join(', ')}`);
    }
  }
  errors.throwIfAny('The request body has invalid fields');
  return (body as { dkimAlgorithm?: DkimAlgorithm }).dkimAlgorithm;
}

const listQuery = {
  type: 'object',
  additionalProperties: false,
  properties: {
    ...pagingProperties,
    name: { type: 'string', maxLength: 253 },
    channelIds: { type: 'string', maxLength: 20_000 },
  },
} as const;

function recordJson(r: DnsRecordState) {
  return { type: r.type, host: r.host, value: r.value, status: r.status, lastCheckedAt: r.lastCheckedAt };
}

/**
 * The dnsRecords object (spec 2.2); domainKeyPending is null while no rotation is under way.
 * `tracking` and `unsubscribe` are the optional link-host CNAMEs (domain/link-hosts.ts); a domain
 * stored before they existed gets them at its next check.
 */
function dnsRecordsJson(d: SendingDomain) {
  return {
    domainKeyActive: recordJson(d.activeKey.record),
    domainKeyPending: d.pendingKey ? recordJson(d.pendingKey.record) : null,
    returnPath: d.returnPath.map(recordJson),
    ...(d.linkHosts ? { tracking: recordJson(d.linkHosts.tracking), unsubscribe: recordJson(d.linkHosts.unsubscribe) } : {}),
  };
}

/** With the DNS records comes `warnings`, when the configuration makes them point at a short name. */
function domainJson(domains: DomainService, d: SendingDomain, dns: { warnings: SetupWarning[] } | false) {
  const base = { id: d.id, createdAt: d.createdAt, name: d.name, verified: d.verified, channels: domains.linkedChannels(d) };
  if (!dns) return base;
  return { ...base, dnsRecords: dnsRecordsJson(d), ...(dns.warnings.length > 0 ? { warnings: dns.warnings } : {}) };
}

/** What a verify that DNS could not complete tells the client to wait before retrying. */
const VERIFY_RETRY_AFTER_S = 30;

/** Each id must name a live channel of the caller's account (404 channel_not_found, 403). */
function channelsToLink(store: Store, p: Principal, ids: readonly string[] | undefined): string[] {
  const unique = [...new Set((ids ?? []).map((id) => id.toLowerCase()))];
  return unique.map((id) => channelFor(store, p, id).id);
}

/** The name of a new domain, normalized (IDNA), or the 422 that says why it cannot be one. */
function domainName(raw: string): string {
  const name = normalizeDomainName(raw);
  if (!name.ok) {
    throw new AppError('validation_failed', 'The domain name cannot be registered', {
      errors: { '/name': [{ code: name.code, message: name.message }] },
    });
  }
  return name.name;
}

const idOf = (req: { params: unknown }) => (req.params as { id: string }).id;

export function domainRoutes(domains: DomainService) {
  return (app: FastifyInstance, { store }: HttpContext): void => {
    collectionRoutes(app, domains, store);
    itemRoutes(app, domains, store);
    dnsRoutes(app, domains);
  };
}

/** POST and GET /domains. */
function collectionRoutes(app: FastifyInstance, domains: DomainService, store: Store): void {
  app.post('/domains', { schema: { body: createBody } }, async (req) => {
    requireAccountKey(req.principal);
    const body = req.body as { name: string; channelIds?: string[]; dkimAlgorithm?: DkimAlgorithm };
    const name = domainName(body.name);
    const channelIds = channelsToLink(store, req.principal, body.channelIds);
    const domain = await domains.create({ accountId: req.principal.accountId, name, channelIds, algorithm: body.dkimAlgorithm });
    return domainJson(domains, domain, { warnings: domains.setupWarnings() });
  });

  app.get('/domains', { schema: { querystring: listQuery }, attachValidation: true }, async (req) => {
    const q = req.query as { limit?: number; offset?: number; name?: string; channelIds?: string };
    const errors = schemaErrors(req);
    const ids = channelIdsFilter(q.channelIds, req.principal, errors);
    errors.throwIfAny('The query has invalid parameters');
    const { results, totalCount } = domains.list({
      accountId: req.principal.accountId,
      channelIds: ids,
      name: q.name,
      limit: q.limit ?? 25,
      offset: q.offset ?? 0,
    });
    return { results: results.map((d) => domainJson(domains, d, false)), totalCount };
  });
}

/** GET, PATCH and DELETE /domains/{id}. */
function itemRoutes(app: FastifyInstance, domains: DomainService, store: Store): void {
  app.get('/domains/:id', async (req) => {
    return domainJson(domains, domains.visibleTo(req.principal, idOf(req)), { warnings: domains.setupWarnings() });
  });

  app.patch('/domains/:id', { schema: { body: updateBody } }, async (req) => {
    const domain = domains.visibleTo(req.principal, idOf(req));
    requireAccountKey(req.principal);
    const channelIds = channelsToLink(store, req.principal, (req.body as { channelIds: string[] }).channelIds);
    return domainJson(domains, await domains.setChannels(domain.id, channelIds), false);
  });

  app.delete('/domains/:id', async (req, reply) => {
    const domain = domains.visibleTo(req.principal, idOf(req));
    requireAccountKey(req.principal);
    await domains.remove(domain.id);
    return reply.code(204).send();
  });
}

/** POST /domains/{id}/verify and /rotate-key. */
function dnsRoutes(app: FastifyInstance, domains: DomainService): void {
  // A check DNS could not complete is a 503, not a 200 with the old statuses (issue 18).
  app.post('/domains/:id/verify', async (req) => {
    const domain = domains.visibleTo(req.principal, idOf(req));
    const checked = await domains.check(domain.id);
    if (!checked) throw new AppError('not_found', `Domain ${domain.id} does not exist`);
    if (checked.dnsError) {
      throw new AppError('service_unavailable', 'DNS could not be reached for some records: they were not checked and keep their status; retry later', {
        headers: { 'retry-after': String(VERIFY_RETRY_AFTER_S) },
      });
    }
    return dnsRecordsJson(checked.domain);
  });

  app.post('/domains/:id/rotate-key', async (req) => {
    const domain = domains.visibleTo(req.principal, idOf(req));
    requireAccountKey(req.principal);
    const updated = await domains.rotateKey(domain.id, rotateAlgorithm(req.body));
    // The SDKs' rotateKey answers the new pending DKIM record alone (api-surface.md).
    return recordJson(updated.pendingKey.record);
  });
}
