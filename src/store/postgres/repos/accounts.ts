import type { PgContext } from '../context.js';
import type { AccountsPort } from '../../port/accounts.js';
import { pending } from './pending.js';

export function pgAccounts(_ctx: PgContext): AccountsPort {
  return pending<AccountsPort>('Accounts');
}
