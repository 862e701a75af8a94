/**
 * Domain records as an older postrider left them in the LMDB engine, for tests of what a later
 * version does with them. The port's verbs write today's shape only, so this is engine-specific:
 * it rewrites the record and the private keys in the engine's own write.
 */
import type { SendingDomain } from '../../src/domain/sending-domain.js';
import { dbsOf } from '../../src/store/lmdb/databases.js';
import { getDomain } from '../../src/store/lmdb/domains.js';
import type { LmdbStore } from '../../src/store/lmdb/engine.js';

/**
 * The domain as a store written before dual signing holds it (RFC 8463 3, issue 21): its active
 * ed25519 key without the RSA companion, whose private key is gone too.
 */
export async function dropRsaCompanion(store: LmdbStore, domainId: string): Promise<void> {
  await store.write(() => {
    const stored = getDomain(store, domainId)!;
    const { rsaCompanion, ...activeKey } = stored.activeKey;
    dbsOf(store).domains.put(domainId, { ...stored, activeKey } satisfies SendingDomain);
    if (rsaCompanion) dbsOf(store).dkimKeys.remove([domainId, rsaCompanion.selector]);
  });
}
