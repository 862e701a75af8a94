import type { PgContext } from '../context.js';
import type { DomainsPort } from '../../port/domains.js';
import { pending } from './pending.js';

export function pgDomains(_ctx: PgContext): DomainsPort {
  return pending<DomainsPort>('Domains');
}
