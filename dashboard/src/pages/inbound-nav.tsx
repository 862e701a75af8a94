import { api } from '../api';
import { Link } from '../router';
import { useApi } from '../use-api';
import type { InboundRoute, Page } from '../wire';

/** The two lists of the Inbound section, as links (the current one marked for screen readers). */
export function InboundTabs(props: { current: 'routes' | 'messages' }) {
  return (
    <nav class="subnav" aria-label="Inbound">
      <Link to="/inbound" aria-current={props.current === 'routes' ? 'page' : undefined}>
        Routes
      </Link>
      <Link to="/inbound/messages" aria-current={props.current === 'messages' ? 'page' : undefined}>
        Messages
      </Link>
    </nav>
  );
}

/**
 * The account's routes (GET /inbound/routes, up to 500, the API's largest page; an account has
 * at most inbound.maxRoutesPerAccount, 100 by default) for the message pages: a route filter,
 * and a message's route by address. A message of a deleted route finds none (and says so).
 */
export function useRouteOptions() {
  return useApi(() => api.get<Page<InboundRoute>>('/inbound/routes', { limit: 500 }), []);
}
