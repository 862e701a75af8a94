/**
 * /domains: spec 4.6-4.9 and the DESIGN.md additions (create, list, rotate-key).
 *
 * Access (checked by DomainService, which each handler calls once): writes need an account-level
 * key. A channel key may read (and verify) only the domains linked to its channel. Another
 * account's domain is 403; an unknown one 404 not_found.
 */
import type { FastifyInstance } from 'fastify';
import { AppError } from '../../domain/errors.js';
import { dmarcInheritedFrom } from '../../domain/dmarc-record.js';
import type { SetupWarning } from '../../domain/setup-warnings.js';
import type { DkimAlgorithm, DnsRecordState, SendingDomain } from '../../domain/sending-domain.js';
import type { CurrentRecords, DomainService } from '../../domains/service.js';
import { dkimAlgorithmSchema, pagingProperties } from '../schemas.js';
import { channelIdsFilter, schemaErrors } from '../query-params.js';
import type { DmarcRecord, DnsRecord, DnsRecordCheck, DnsRecords, DomainDetail, DomainSummary, Page, RotatedKey, VerifyResult } from '../../domain/wire.js';

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

const listQuery = {
  type: 'object',
  additionalProperties: false,
  properties: {
    ...pagingProperties,
    name: { type: 'string', maxLength: 253 },
    channelIds: { type: 'string', maxLength: 20_000 },
  },
} as const;

/**
 * A record as the SDKs know it ({type, host, value, status, lastCheckedAt}), with what the last
 * lookup of this value found (`check`), the warnings of the settings it depends on, and the
 * verified record of earlier settings it `replaces` (the domain sends with that one meanwhile).
 */
function recordJson(r: DnsRecordState, extra: { warnings?: SetupWarning[]; replaces?: DnsRecordState } = {}): DnsRecord {
  const { warnings, replaces } = extra;
  return {
    type: r.type,
    host: r.host,
    value: r.value,
    status: r.status,
    lastCheckedAt: r.lastCheckedAt,
    ...(r.check ? { check: checkJson(r.check) } : {}),
    ...(warnings && warnings.length > 0 ? { warnings } : {}),
    ...(replaces ? { replaces: { host: replaces.host, value: replaces.value, lastCheckedAt: replaces.lastCheckedAt } } : {}),
  };
}

function checkJson(c: NonNullable<DnsRecordState['check']>): DnsRecordCheck {
  return { result: c.result, checkedAt: c.checkedAt, ...(c.found ? { found: [...c.found] } : {}), ...(c.foundTruncated ? { foundTruncated: true } : {}) };
}

/** The DMARC record, and the Organizational Domain it is inherited from when it is not the domain's own (RFC 7489 6.6.3). */
function dmarcJson(r: DnsRecordState, domain: string, warnings: SetupWarning[]): DmarcRecord {
  const inheritedFrom = dmarcInheritedFrom(domain, r);
  return { ...recordJson(r, { warnings }), ...(inheritedFrom !== undefined && { inheritedFrom }) };
}

/**
 * The dnsRecords object (spec 2.2); domainKeyPending is null while no rotation is under way.
 * The return-path and link-host records are those of the current settings (DomainService
 * currentRecords), not those stored at the last check.
 * `tracking` and `unsubscribe` are the optional link-host CNAMEs (domain/link-hosts.ts). `dmarc` is the advisory _dmarc TXT
 * (domain/dmarc-record.ts): the recommended one until a check found the domain's own, or its
 * Organizational Domain's (then with `inheritedFrom`).
 * `domainKeyActiveCompanion` and `domainKeyPendingCompanion`: the RSA companion of an ed25519
 * key (RFC 8463 3, dual signing), present when the key has one. `inbound`: the MX of the domain
 * itself, present while it has inbound routes (issue 33).
 */
function dnsRecordsJson(d: SendingDomain, current: CurrentRecords): DnsRecords {
  const links = { warnings: current.linkHostWarnings };
  return {
    domainKeyActive: recordJson(d.activeKey.record),
    domainKeyPending: d.pendingKey ? recordJson(d.pendingKey.record) : null,
    ...(d.activeKey.rsaCompanion ? { domainKeyActiveCompanion: recordJson(d.activeKey.rsaCompanion.record) } : {}),
    ...(d.pendingKey?.rsaCompanion ? { domainKeyPendingCompanion: recordJson(d.pendingKey.rsaCompanion.record) } : {}),
    returnPath: current.returnPath.map((r) => recordJson(r.record, { warnings: current.returnPathWarnings, replaces: r.replaces })),
    tracking: recordJson(current.linkHosts.tracking, links),
    unsubscribe: recordJson(current.linkHosts.unsubscribe, links),
    dmarc: dmarcJson(current.dmarc, d.name, current.dmarcWarnings),
    ...(current.inbound ? { inbound: recordJson(current.inbound, { warnings: current.returnPathWarnings }) } : {}),
  };
}

/** Every warning of the records once (a setting's warning is on each record that depends on it). */
function allWarnings(current: CurrentRecords): SetupWarning[] {
  const all = [...current.returnPathWarnings, ...current.linkHostWarnings, ...current.dmarcWarnings];
  return all.filter((w, i) => all.findIndex((x) => x.code === w.code) === i);
}

/** A domain without its records (GET /domains items, PATCH /domains/{id}). */
async function domainJson(domains: DomainService, d: SendingDomain): Promise<DomainSummary> {
  return { id: d.id, createdAt: d.createdAt, name: d.name, verified: d.verified, channels: await domains.linkedChannels(d) };
}

/**
 * With the DNS records comes `warnings`, every warning of the records (domain/setup-warnings.ts):
 * while the settings make a record unpublishable or the recommended DMARC record has no report address.
 */
async function domainDetailJson(domains: DomainService, d: SendingDomain): Promise<DomainDetail> {
  const current = await domains.currentRecords(d);
  const warnings = allWarnings(current);
  return { ...(await domainJson(domains, d)), dnsRecords: dnsRecordsJson(d, current), ...(warnings.length > 0 ? { warnings } : {}) };
}

/** What a verify that DNS could not complete tells the client to wait before retrying. */
const VERIFY_RETRY_AFTER_S = 30;

const idOf = (req: { params: unknown }) => (req.params as { id: string }).id;

export function domainRoutes(domains: DomainService) {
  return (app: FastifyInstance): void => {
    collectionRoutes(app, domains);
    itemRoutes(app, domains);
    dnsRoutes(app, domains);
  };
}

/** POST and GET /domains. */
function collectionRoutes(app: FastifyInstance, domains: DomainService): void {
  app.post('/domains', { schema: { body: createBody } }, async (req): Promise<DomainDetail> => {
    const body = req.body as { name: string; channelIds?: string[]; dkimAlgorithm?: DkimAlgorithm };
    const domain = await domains.create(req.principal, { name: body.name, channelIds: body.channelIds, algorithm: body.dkimAlgorithm });
    return domainDetailJson(domains, domain);
  });

  app.get('/domains', { schema: { querystring: listQuery }, attachValidation: true }, async (req): Promise<Page<DomainSummary>> => {
    const q = req.query as { limit?: number; offset?: number; name?: string; channelIds?: string };
    const errors = schemaErrors(req);
    const ids = channelIdsFilter(q.channelIds, req.principal, errors);
    errors.throwIfAny('The query has invalid parameters');
    const { results, totalCount } = await domains.list({
      accountId: req.principal.accountId,
      channelIds: ids,
      name: q.name,
      limit: q.limit ?? 25,
      offset: q.offset ?? 0,
    });
    return { results: await Promise.all(results.map((d) => domainJson(domains, d))), totalCount };
  });
}

/** GET, PATCH and DELETE /domains/{id}. */
function itemRoutes(app: FastifyInstance, domains: DomainService): void {
  app.get('/domains/:id', async (req): Promise<DomainDetail> => {
    return domainDetailJson(domains, await domains.visibleTo(req.principal, idOf(req)));
  });

  app.patch('/domains/:id', { schema: { body: updateBody } }, async (req): Promise<DomainSummary> => {
    const { channelIds } = req.body as { channelIds: string[] };
    return domainJson(domains, await domains.setChannels(req.principal, idOf(req), channelIds));
  });

  app.delete('/domains/:id', async (req, reply) => {
    await domains.remove(req.principal, idOf(req));
    return reply.code(204).send();
  });
}

/** POST /domains/{id}/verify and /rotate-key. */
function dnsRoutes(app: FastifyInstance, domains: DomainService): void {
  // A check DNS could not complete is a 503, not a 200 with the old statuses (issue 18): the SDKs
  // read the statuses alone. The message names the hosts; GET /domains/{id} shows those records'
  // `check` as lookup_failed. The answer is the dnsRecords object the SDKs parse, with the
  // domain's `verified` beside the records (issue 30).
  app.post('/domains/:id/verify', async (req): Promise<VerifyResult> => {
    const checked = await domains.check(req.principal, idOf(req));
    if (checked.dnsError) {
      const hosts = checked.failedHosts.slice(0, 10).join(', ');
      throw new AppError('service_unavailable', `DNS could not be reached for ${hosts}: those records were not checked and keep their status; retry later`, {
        headers: { 'retry-after': String(VERIFY_RETRY_AFTER_S) },
      });
    }
    return { verified: checked.domain.verified, ...dnsRecordsJson(checked.domain, await domains.currentRecords(checked.domain)) };
  });

  // The body ({dkimAlgorithm?}, optional) is checked by the service after the access rules.
  app.post('/domains/:id/rotate-key', async (req): Promise<RotatedKey> => {
    const updated = await domains.rotateKey(req.principal, idOf(req), req.body);
    // The SDKs' rotateKey answers the new pending DKIM record alone (api-surface.md); an ed25519
    // key's RSA companion, to publish with it, comes as an extra field.
    const companion = updated.pendingKey.rsaCompanion;
    return { ...recordJson(updated.pendingKey.record), ...(companion ? { rsaCompanion: recordJson(companion.record) } : {}) };
  });
}
