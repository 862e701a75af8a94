/**
 * MtaStsPort over mta_sts_policies: the last policy fetched per recipient domain (RFC 8461 5.1
 * lets it stand in for a missing TXT record). save is an upsert: last writer wins, both are fresh.
 */
import type { CachedStsPolicy, MtaStsPort } from '../../port/delivery-state.js';
import type { PgContext } from '../context.js';

export function pgMtaSts(ctx: PgContext): MtaStsPort {
  return {
    async get(domain) {
      const [row] = await ctx.sql<{ doc: CachedStsPolicy }[]>`SELECT doc FROM mta_sts_policies WHERE domain = ${domain}`;
      return row?.doc;
    },
    async save(domain, entry) {
      await ctx.sql`
        INSERT INTO mta_sts_policies (domain, doc) VALUES (${domain}, ${ctx.sql.json(entry as never)})
        ON CONFLICT (domain) DO UPDATE SET doc = excluded.doc`;
    },
  };
}
