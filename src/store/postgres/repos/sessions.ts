import type { PgContext } from '../context.js';
import type { DashboardSessionsPort } from '../../port/accounts.js';
import { pending } from './pending.js';

export function pgSessions(_ctx: PgContext): DashboardSessionsPort {
  return pending<DashboardSessionsPort>('Sessions');
}
