/**
 * Domain records as an older postrider left them, in the PostgreSQL engine, for tests of what a
 * later version does with them (support/engine-fixtures.ts): the port's verbs write today's
 * shape only, so this rewrites the row and the private keys in one transaction of the engine.
 */
import type { SendingDomain } from '../../src/domain/sending-domain.js';
import { pgContextOf, type PostgresStore } from '../../src/store/postgres/engine.js';
import { lockDomain, removeKeys, writeDomain } from '../../src/store/postgres/domains-rows.js';

/**
 * The domain as a store written before dual signing holds it (RFC 8463 3, issue 21): its active
 * ed25519 key without the RSA companion, whose private key is gone too.
 */
export async function pgDropRsaCompanion(store: PostgresStore, domainId: string): Promise<void> {
  await pgContextOf(store).begin(async (tx) => {
    const stored = await lockDomain(tx, domainId);
    if (!stored) throw new Error(`no domain ${domainId}`);
    const { rsaCompanion, ...activeKey } = stored.activeKey;
    await writeDomain(tx, { ...stored, activeKey } satisfies SendingDomain);
    if (rsaCompanion) await removeKeys(tx, domainId, [rsaCompanion.selector]);
  });
}
