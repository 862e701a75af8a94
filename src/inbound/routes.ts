/**
 * The inbound route service (issue 33): the writes of /inbound/routes with their policy, the
 * reads, and the access rules, so the route handlers only parse and map. As for webhooks: writes
 * need an account-level key; a channel key may read the routes of its own channel; another
 * account's route is 403 forbidden, an unknown one 404 not_found; the channel must be a live
 * channel of the caller's account (404 channel_not_found, 403). The address must be on a verified
 * domain of the account, and its URL and headers follow the webhook rules (webhooks/endpoint-check.ts),
 * every problem of a body reported together.
 */
import { accessibleChannel } from '../channels/service.js';
import { requireAccountKey } from '../domain/access.js';
import { AppError, FieldErrorList } from '../domain/errors.js';
import { parseRouteAddress, unknownRouteDomain, type InboundRoute } from '../domain/inbound-route.js';
import type { Principal } from '../domain/types.js';
import { isUuid } from '../domain/uuid.js';
import type { WebhookHeader } from '../domain/webhook.js';
import type { InboundRouteFilter } from '../store/port/inbound-routes.js';
import type { StorePort } from '../store/port/index.js';
import { checkEndpoint } from '../webhooks/endpoint-check.js';
import type { WebhookTargets } from '../webhooks/targets.js';

export interface RouteInput {
  url?: string;
  channelId?: string;
  enabled?: boolean;
  additionalHeaders?: WebhookHeader[];
}

export type NewRouteInput = RouteInput & { address: string; url: string; channelId: string };

export interface InboundRouteServiceOptions {
  store: StorePort;
  /** The webhooks' target check: route URLs follow the same rules (webhooks.allowHttp, allowPrivate). */
  targets: WebhookTargets;
  /** config.inbound.maxRoutesPerAccount */
  maxPerAccount: number;
}

/** A route as every answer shows it: with the key its payloads are signed with. */
export interface RouteWithSigningKey {
  route: InboundRoute;
  signingKey: string;
}

export class InboundRouteService {
  constructor(private readonly o: InboundRouteServiceOptions) {}

  /** The route a request names, if the principal may see it (404 unknown or malformed, 403 another account's or channel's). */
  async visibleTo(p: Principal, id: string): Promise<RouteWithSigningKey> {
    const route = isUuid(id) ? await this.o.store.inboundRoutes.get(id.toLowerCase()) : undefined;
    if (!route) throw notFound(id);
    if (route.accountId !== p.accountId || (p.channelId && route.channelId !== p.channelId)) {
      throw new AppError('forbidden', 'The API key may not access this inbound route');
    }
    return this.withKey(route);
  }

  async list(filter: InboundRouteFilter): Promise<{ results: RouteWithSigningKey[]; totalCount: number }> {
    const { results, totalCount } = await this.o.store.inboundRoutes.list(filter);
    return { results: await Promise.all(results.map((r) => this.withKey(r))), totalCount };
  }

  /**
   * Account-level keys only. The channel is checked first (404/403 are not field errors), then
   * the address, the URL and the headers together; the store decides the limit, the address's
   * uniqueness and the domain again, atomically, in its commit.
   */
  async create(p: Principal, input: NewRouteInput): Promise<RouteWithSigningKey> {
    requireAccountKey(p);
    const channelId = (await accessibleChannel(this.o.store, p, input.channelId)).id;
    const parsed = parseRouteAddress(input.address);
    const domain = 'problem' in parsed ? undefined : await this.o.store.domains.findByName(p.accountId, parsed.domain);
    const errors = new FieldErrorList();
    if ('problem' in parsed) errors.add('/address', parsed.problem.code, parsed.problem.message);
    else if (!domain) errors.add('/address', 'unknown_domain', `${parsed.domain} is not a domain of this account (POST /domains first)`);
    // Only a domain whose DNS the account has shown it controls: another account could otherwise
    // add a domain name it does not own and route its addresses first (one route per address),
    // taking the real owner's mail once the owner points the MX here.
    else if (!domain.verified) errors.add('/address', 'domain_unverified', `${parsed.domain} is not verified yet: publish its DNS records and POST /domains/${domain.id}/verify first`);
    await checkEndpoint(this.o.targets, input, errors);
    errors.throwIfAny('The request body has invalid fields');
    // Both are known here (throwIfAny threw otherwise); the test narrows their types.
    if ('problem' in parsed || !domain) throw unknownRouteDomain(input.address);
    const { route, signingKey } = await this.o.store.inboundRoutes.create({
      accountId: p.accountId,
      channelId,
      domainId: domain.id,
      address: parsed.address,
      url: input.url,
      enabled: input.enabled ?? true,
      additionalHeaders: input.additionalHeaders ?? [],
      maxPerAccount: this.o.maxPerAccount,
    });
    return { route, signingKey };
  }

  /** Whether the route is visible (404/403) comes before whether the key may write it (403), and that before the channel named. */
  async update(p: Principal, id: string, input: RouteInput): Promise<RouteWithSigningKey> {
    const { route } = await this.writableBy(p, id);
    const channelId = input.channelId === undefined ? undefined : (await accessibleChannel(this.o.store, p, input.channelId)).id;
    const errors = new FieldErrorList();
    await checkEndpoint(this.o.targets, input, errors);
    errors.throwIfAny('The request body has invalid fields');
    const updated = await this.o.store.inboundRoutes.update(route.id, { ...input, channelId });
    if (!updated) throw notFound(route.id);
    return this.withKey(updated);
  }

  async remove(p: Principal, id: string): Promise<void> {
    const { route } = await this.writableBy(p, id);
    if (!(await this.o.store.inboundRoutes.delete(route.id))) throw notFound(route.id);
  }

  /** The old key stops signing at once. */
  async regenerateKey(p: Principal, id: string): Promise<RouteWithSigningKey> {
    const { route } = await this.writableBy(p, id);
    const again = await this.o.store.inboundRoutes.regenerateSigningKey(route.id);
    if (!again) throw notFound(route.id);
    return again;
  }

  /** visibleTo, then the account-key rule: a channel key learns 404/403 as for a read first. */
  private async writableBy(p: Principal, id: string): Promise<RouteWithSigningKey> {
    const found = await this.visibleTo(p, id);
    requireAccountKey(p);
    return found;
  }

  /** A route is stored with its key; one deleted between the two reads is gone (404). */
  private async withKey(route: InboundRoute): Promise<RouteWithSigningKey> {
    const signingKey = await this.o.store.inboundRoutes.signingKey(route.id);
    if (signingKey === null) throw notFound(route.id);
    return { route, signingKey };
  }
}

function notFound(id: string): AppError {
  return new AppError('not_found', `Inbound route ${id} does not exist`);
}

