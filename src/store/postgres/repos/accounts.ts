/**
 * The PostgreSQL engine's accounts (store/port/accounts.ts AccountsPort): one row per account,
 * the record in doc.
 */
import { randomUUID } from 'node:crypto';
import type { Account, AccountState } from '../../../domain/types.js';
import type { PgContext } from '../context.js';
import type { AccountsPort } from '../../port/accounts.js';

export function pgAccounts(ctx: PgContext): AccountsPort {
  const { sql } = ctx;
  return {
    async create(input: { name: string; state: AccountState }): Promise<Account> {
      const now = new Date().toISOString();
      const account: Account = { id: randomUUID(), name: input.name, state: input.state, createdAt: now, updatedAt: now };
      await sql`INSERT INTO accounts (id, doc) VALUES (${account.id}, ${sql.json(account)})`;
      return account;
    },

    async get(id: string): Promise<Account | undefined> {
      const [row] = await sql<{ doc: Account }[]>`SELECT doc FROM accounts WHERE id = ${id}`;
      return row?.doc;
    },

    async list(): Promise<Account[]> {
      const rows = await sql<{ doc: Account }[]>`SELECT doc FROM accounts ORDER BY id`;
      return rows.map((r) => r.doc);
    },

    /** One conditional UPDATE … RETURNING: never creates an account, atomic on its own. */
    async setState(id: string, state: AccountState): Promise<Account | undefined> {
      const patch = { state, updatedAt: new Date().toISOString() };
      const [row] = await sql<{ doc: Account }[]>`
        UPDATE accounts SET doc = doc || ${sql.json(patch)} WHERE id = ${id} RETURNING doc`;
      return row?.doc;
    },
  };
}
