/** The LMDB engine's LmdbInboundRoutes: the port's verbs over store/lmdb/inbound-routes.ts. */
import type { InboundRoute, InboundRoutePatch, RouteMatch } from '../../../domain/inbound-route.js';
import type { Store } from '../env.js';
import type { InboundRoutesPort } from '../../port/index.js';
import type { InboundRouteFilter, NewInboundRouteInput, RouteWithKey } from '../../port/inbound-routes.js';
import {
  anyRouteOnDomain,
  createRoute,
  deleteRoute,
  getRoute,
  getRouteSigningKey,
  listRoutes,
  matchRoute,
  oldestEnabledRoute,
  regenerateRouteKey,
  updateRoute,
} from '../inbound-routes.js';

export class LmdbInboundRoutes implements InboundRoutesPort {
  constructor(private readonly store: Store) {}

  /** The limit, the unique address and the live domain and channel are checked inside the one write. */
  create(input: NewInboundRouteInput): Promise<RouteWithKey> {
    return createRoute(this.store, input);
  }

  async get(id: string): Promise<InboundRoute | undefined> {
    return getRoute(this.store, id);
  }

  async signingKey(id: string): Promise<string | null> {
    return getRouteSigningKey(this.store, id);
  }

  async list(f: InboundRouteFilter): Promise<{ results: InboundRoute[]; totalCount: number }> {
    return listRoutes(this.store, f);
  }

  update(id: string, patch: InboundRoutePatch): Promise<InboundRoute | undefined> {
    return updateRoute(this.store, id, patch);
  }

  regenerateSigningKey(id: string): Promise<RouteWithKey | undefined> {
    return regenerateRouteKey(this.store, id);
  }

  delete(id: string): Promise<boolean> {
    return deleteRoute(this.store, id);
  }

  async anyOnDomain(domainId: string): Promise<boolean> {
    return anyRouteOnDomain(this.store, domainId);
  }

  async match(recipient: string): Promise<RouteMatch | undefined> {
    return matchRoute(this.store, recipient);
  }

  async oldestEnabledOnDomain(domain: string): Promise<InboundRoute | undefined> {
    return oldestEnabledRoute(this.store, domain);
  }
}
