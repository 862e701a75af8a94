/**
 * The hint a CLI command adds to "no store here" (cli/with-store.ts): it names where the store's
 * location came from, for the engine in use, so that the operator can point the command at the
 * daemon's store. The LMDB hint is covered end to end (test/e2e/cli.test.ts).
 */
import { describe, expect, it } from 'vitest';
import { postgresSource } from '../../src/cli/with-store.js';

const io = (env: Record<string, string>) => ({ out: () => {}, err: () => {}, env });

describe('the no-store hint in cluster mode', () => {
  it('names the environment variables when the URL and schema come from them', () => {
    const hint = postgresSource(io({ POSTRIDER_STORE_POSTGRES_URL: 'postgres://x', POSTRIDER_STORE_POSTGRES_SCHEMA: 's' }), undefined);
    expect(hint).toMatch(/^the URL comes from POSTRIDER_STORE_POSTGRES_URL, the schema from POSTRIDER_STORE_POSTGRES_SCHEMA\. /);
    expect(hint).not.toContain('POSTRIDER_DATA_DIR');
  });

  it('names the configuration file and the default schema otherwise', () => {
    expect(postgresSource(io({}), '/etc/postrider/postrider.jsonc')).toMatch(
      /^the URL is store\.postgresUrl of \/etc\/postrider\/postrider\.jsonc, the schema is store\.postgresSchema of \/etc\/postrider\/postrider\.jsonc \(default postrider\)\. /,
    );
    expect(postgresSource(io({ POSTRIDER_STORE_POSTGRES_URL: 'postgres://x' }), undefined)).toContain('the schema is the default postrider');
  });
});
