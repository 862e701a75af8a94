/**
 * The PostgreSQL engine's meta (store/port/meta.ts MetaPort): the first-start marks in `meta`,
 * the tracking secret in `secrets` (bytes).
 */
import { randomBytes } from 'node:crypto';
import type { PgContext } from '../context.js';
import type { MetaPort } from '../../port/meta.js';

const TRACKING = 'trackingSecret';

export function pgMeta(ctx: PgContext): MetaPort {
  const { sql } = ctx;

  async function readSecret(): Promise<Buffer | undefined> {
    const [row] = await sql<{ value: Buffer }[]>`SELECT value FROM secrets WHERE name = ${TRACKING}`;
    return row?.value;
  }

  return {
    async isBootstrapped(): Promise<boolean> {
      return (await sql`SELECT 1 FROM meta WHERE key = 'bootstrappedAt'`).length > 0;
    },

    /** Both marks in one statement, so one commit. */
    async markBootstrapped(at: Date): Promise<void> {
      await sql`
        INSERT INTO meta (key, value)
        VALUES ('bootstrappedAt', ${sql.json(at.toISOString())}), ('initialKeyPending', 'true'::jsonb)
        ON CONFLICT (key) DO UPDATE SET value = excluded.value`;
    },

    async isInitialKeyPending(): Promise<boolean> {
      return (await sql`SELECT 1 FROM meta WHERE key = 'initialKeyPending' AND value = 'true'::jsonb`).length > 0;
    },

    async clearInitialKeyPending(): Promise<void> {
      await sql`DELETE FROM meta WHERE key = 'initialKeyPending'`;
    },

    /**
     * Insert-if-absent (ON CONFLICT DO NOTHING), then read: nodes starting together agree on one
     * secret. Under READ COMMITTED an INSERT that meets another's uncommitted row waits for its
     * commit, so the read after it always finds the secret in force.
     */
    async ensureTrackingSecret(): Promise<Buffer> {
      const known = await readSecret();
      if (known) return known;
      await sql`INSERT INTO secrets (name, value) VALUES (${TRACKING}, ${randomBytes(32)}) ON CONFLICT (name) DO NOTHING`;
      const secret = await readSecret();
      if (!secret) throw new Error('tracking secret missing right after it was stored');
      return secret;
    },

    async trackingSecret(): Promise<Buffer> {
      const secret = await readSecret();
      if (!secret) throw new Error('tracking secret missing: ensureTrackingSecret was not called');
      return secret;
    },
  };
}
