/**
 * The PostgreSQL engine's fixtures of the messages and broadcasts aggregates (reached through
 * support/engine-fixtures.ts; tests never import this file): one message removed as retention
 * removes it, and the older records the PostgreSQL engine has none of.
 */
import { pgContextOf, type PostgresStore } from '../../src/store/postgres/engine.js';
import { purgeMessages } from '../../src/store/postgres/retention-messages.js';

/** Retention's removal of one finished message: record, body, client ids, its jobs; its events stay. */
export async function pgForgetMessage(store: PostgresStore, messageId: string): Promise<void> {
  await pgContextOf(store).begin((tx) => purgeMessages(tx, [messageId]));
}

/**
 * No PostgreSQL store was ever written by an older postrider (0.1 kept LMDB only; the engine's
 * first schema is migration 1), so there is no older broadcast record to put: the upgrade test
 * that asks for one is the LMDB engine's.
 */
export async function pgPutBroadcastAsOlderVersion(_dataDir: string, record: { id: string }): Promise<void> {
  throw new Error(`the PostgreSQL engine has no older versions: no broadcast ${record.id} as postrider 0.1 wrote it can exist in it`);
}
