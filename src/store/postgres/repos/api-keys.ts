import type { PgContext } from '../context.js';
import type { ApiKeysPort } from '../../port/accounts.js';
import { pending } from './pending.js';

export function pgApiKeys(_ctx: PgContext): ApiKeysPort {
  return pending<ApiKeysPort>('ApiKeys');
}
